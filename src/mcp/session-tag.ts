// What is published about a session: a short opaque tag, never its id. The id
// works as a bearer credential for the session; invocation rows, REST and the
// admin WebSocket only need to tell sessions apart. A keyed hash (the key lives
// and dies with the daemon, like the sessions) cannot be reversed or
// recomputed from outside. Tags are kept, as every call of a session records
// one and a keyed hash per call is a visible part of a call's cost.
import { createHmac, randomBytes } from 'node:crypto';

const TAG_HEX_CHARS = 12;
/** Tags kept at most; past it the memo starts over (a tag is recomputed, never different). */
const TAGS_KEPT = 4096;

export class SessionTags {
  private readonly key = randomBytes(32);
  private readonly kept = new Map<string, string>();

  tag(sessionId: string): string {
    let tag = this.kept.get(sessionId);
    if (tag === undefined) {
      if (this.kept.size >= TAGS_KEPT) this.kept.clear();
      tag = createHmac('sha256', this.key).update(sessionId).digest('hex').slice(0, TAG_HEX_CHARS);
      this.kept.set(sessionId, tag);
    }
    return tag;
  }
}
