/**
 * A bound on a wait for another process (a server's answer): the caller gets an answer by then,
 * and the awaited work, which cannot be withdrawn, is left to finish alone.
 */

/** `work`'s outcome, or `onLate()`'s once `timeoutMs` passed without one (throw in it to reject). */
export async function within<T>(work: Promise<T>, timeoutMs: number, onLate: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onLate());
      } catch (error) {
        reject(error);
      }
    }, timeoutMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
