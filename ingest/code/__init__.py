"""Code memory analysis: structure, parameterisation and a static safety scan."""
