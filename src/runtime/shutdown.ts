/** One shutdown path for SIGTERM, SIGINT and tests: resources close in reverse order of opening. */

export class Closer {
  private readonly stack: { name: string; close: () => Promise<void> | void }[] = [];

  /** Registers a resource; the last registered closes first. */
  add(name: string, close: () => Promise<void> | void): void {
    this.stack.push({ name, close });
  }

  /** Closes everything, each within `timeoutMs`; errors are reported, not thrown. */
  async closeAll(timeoutMs = 30_000, onError?: (name: string, err: unknown) => void): Promise<void> {
    while (this.stack.length > 0) {
      const { name, close } = this.stack.pop() as { name: string; close: () => Promise<void> | void };
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(close),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`${name} did not close within ${timeoutMs} ms`)),
              timeoutMs,
            );
          }),
        ]);
      } catch (err) {
        onError?.(name, err);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}

/** Resolves with the signal's name on the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}
