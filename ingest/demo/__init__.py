"""A small demo set of episodes written for the project (loaded by `make run`)."""
