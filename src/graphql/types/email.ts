// GraphQL types, queries and mutations of the email area (filled by its issue).
export {};
