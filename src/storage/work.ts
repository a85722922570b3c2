/**
 * Units of work written once for both storage backends. A unit is a generator that yields each
 * record store's answer, a value in the embedded mode and a promise in the cluster mode, and gets it
 * back resolved: `const api = yield* step(r.apis.findLive(ws, id))`.
 * Why generators and not async functions: an embedded transaction must run to its commit without
 * giving the event loop away (another request's writes on the same connection would join it), and
 * an await always gives it away; a generator driven by `runNow` does not, while `runAsync` drives the
 * same unit over PostgreSQL's promises.
 */

/** What a store answers: a value (embedded) or a promise of it (cluster). */
export type Maybe<T> = T | Promise<T>;

/** A unit of work answering T. */
export type Work<T> = Generator<unknown, T, any>;

/** Yields a store's answer and returns it resolved; `yield*` it inside a unit. */
export function* step<T>(answer: Maybe<T>): Generator<Maybe<T>, T, T> {
  return yield answer;
}

/** Runs a unit whose stores answer synchronously, to the end, without giving the event loop away. */
export function runNow<T>(work: Work<T>): T {
  let next = work.next();
  while (!next.done) {
    if (next.value instanceof Promise) {
      work.return(undefined as T);
      throw new Error("a synchronous unit of work was given a promise");
    }
    next = work.next(next.value);
  }
  return next.value;
}

/** Runs a unit whose stores answer with promises; a rejected answer is thrown inside the unit. */
export async function runAsync<T>(work: Work<T>): Promise<T> {
  let next = work.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = await next.value;
    } catch (error) {
      next = work.throw(error);
      continue;
    }
    next = work.next(answer);
  }
  return next.value;
}

/** `then(answer, fn)`: fn applied to a value now, or to a promise's value when it resolves. */
export function then<T, U>(answer: Maybe<T>, fn: (value: T) => U): Maybe<U> {
  return answer instanceof Promise ? answer.then(fn) : fn(answer);
}

/** `then` for an `fn` that answers a Maybe itself: a promise resolves to its value, so one level is left. */
export function thenMaybe<T, U>(answer: Maybe<T>, fn: (value: T) => Maybe<U>): Maybe<U> {
  return then(answer, fn) as Maybe<U>;
}

/** The value of an answer that is known to be synchronous: the embedded backend's, in its own tools. */
export function answered<T>(answer: Maybe<T>): T {
  if (answer instanceof Promise) throw new Error("expected the embedded backend's synchronous answer");
  return answer;
}
