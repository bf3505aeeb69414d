/** A stream that can hold its writes back (`net.Socket`, `http.ServerResponse`, `fs.WriteStream`). */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Returns a function to call before each write: it corks `stream` until the
 * promise callbacks running now have run (process.nextTick), so that the
 * writes of one burst of events (a cell's end, its answer, turn-done) leave
 * in one write rather than one each: one packet or one file write, and a
 * reader that wakes once.
 */
export function burstCork(stream: Corkable): () => void {
  let corked = false;
  return () => {
    if (corked) return;
    corked = true;
    stream.cork();
    process.nextTick(() => {
      corked = false;
      stream.uncork();
    });
  };
}
