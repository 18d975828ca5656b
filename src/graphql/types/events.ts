// GraphQL types, queries and mutations of the events area (filled by its issue).
export {};
