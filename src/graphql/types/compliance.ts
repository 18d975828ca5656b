// GraphQL types, queries and mutations of the compliance area (filled by its issue).
export {};
