"""The GraphQL room: the schema, its types area by area, their resolvers and the services
they call (recall, planning, code memory, review, keeping memory)."""

__all__: list[str] = []
