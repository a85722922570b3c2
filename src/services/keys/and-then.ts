/** Chaining of store answers for the key operations that run more than one unit, or a unit after a step outside records. */
import { then, type Maybe } from "../../storage/work.ts";

/** `fn` applied to an answer when it comes, `fn` itself answering now or later. */
export function andThen<T, U>(answer: Maybe<T>, fn: (value: T) => Maybe<U>): Maybe<U> {
  return then(answer, fn) as Maybe<U>;
}
