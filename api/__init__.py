"""The Starlette app, the GraphQL schema, authentication and the command line."""
