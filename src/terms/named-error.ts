/**
 * The base of an error class that carries its own name as a literal: what logs print and callers
 * compare stays fixed whatever a build does to class names, and the type keeps the literal.
 */
export function namedError<N extends string>(errorName: N) {
  class NamedError extends Error {
    override readonly name = errorName;
  }
  return NamedError;
}
