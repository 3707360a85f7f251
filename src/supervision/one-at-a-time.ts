// Changes to one piece of state that check it and then write across awaits
// (the database, actors): each runs alone, in the order they came, so none
// decides on what another is about to change.
export class OneAtATime {
  /** The change running now (or the last one): the next waits for it. */
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `change` once every change queued before it has settled; answers what it answers. */
  run<T>(change: () => Promise<T>): Promise<T> {
    const run = this.last.then(change);
    this.last = run.catch(() => undefined);
    return run;
  }
}
