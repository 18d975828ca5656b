// Reading mutation results: every mutation answers `<Verb><Noun>Result`, its payload or a typed error (`Error`).

/** A typed error as the test documents select it (`... on Error { code message field details { … } }`). */
export interface TypedError {
  __typename: string;
  code: string;
  message: string;
  field?: string | null;
  details?: { field: string; code: string; message?: string }[];
}

/** The payload of a mutation result; throws (failing the test) with the typed error's code when it is an error. */
export function payload<T extends { __typename: string }, N extends T['__typename']>(
  result: T | null | undefined,
  typename: N,
): Extract<T, { __typename: N }> {
  if (!result) throw new Error(`expected ${typename}, got no data`);
  if (result.__typename !== typename) {
    const e = result as unknown as Partial<TypedError>;
    throw new Error(`expected ${typename}, got ${result.__typename} ${e.code ?? ''} ${e.message ?? ''}`);
  }
  return result as Extract<T, { __typename: N }>;
}

/** The typed error of a mutation result; throws (failing the test) when it is the payload. */
export function typedError(result: { __typename: string } | null | undefined): TypedError {
  if (!result || !('code' in result)) throw new Error(`expected a typed error, got ${result?.__typename}`);
  return result as unknown as TypedError;
}
