// GraphQL types, queries and mutations of the webhooks area (filled by its issue).
export {};
