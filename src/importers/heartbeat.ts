// A running import's progress in core.load_history (rows and bytes read, and when it last reported), written every
// few seconds on a connection of its own: the import's own connection is busy with COPY or the merge. The operator's
// metrics read it (src/plugins/ops-metrics.ts); a run that stops reporting while still 'running' was killed.
import postgres from 'postgres';

/** How often a running import reports. */
export const HEARTBEAT_MS = 5000;

export interface Reading {
  rows: number;
  bytes: number;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private last: Promise<void> = Promise.resolve();
  private busy = false;
  private readonly sql: postgres.Sql;

  private constructor(
    url: string,
    kind: string,
    private readonly loadId: number,
    private readonly totalBytes: number | null,
    private readonly read: () => Reading,
  ) {
    this.sql = postgres(url, {
      max: 1,
      idle_timeout: 30,
      onnotice: () => {},
      connection: { application_name: `import ${kind} progress` },
    });
  }

  /** Reports at once, then every `everyMs` until stop(). */
  static start(
    url: string,
    kind: string,
    loadId: number,
    totalBytes: number | null,
    read: () => Reading,
    everyMs = HEARTBEAT_MS,
  ): Heartbeat {
    const h = new Heartbeat(url, kind, loadId, totalBytes, read);
    h.beat();
    h.timer = setInterval(() => h.beat(), everyMs);
    h.timer.unref();
    return h;
  }

  /**
   * Writes the current reading, unless the previous report is still waiting (for the merge transaction's lock on the
   * row, held until it commits). Only while the run is 'running': the run's end writes the final counts.
   * A failed report is dropped: progress never fails an import.
   */
  beat(): void {
    if (this.busy) return;
    this.busy = true;
    const { rows, bytes } = this.read();
    this.last = this.sql`
        UPDATE core.load_history
           SET rows_read = ${rows}, bytes_read = ${bytes}, bytes_total = ${this.totalBytes}, progress_at = now()
         WHERE id = ${this.loadId} AND status = 'running'`.then(
      () => void (this.busy = false),
      () => void (this.busy = false),
    );
  }

  /** Writes the current reading now (after the report under way, if any), e.g. once the whole file was read. */
  async report(): Promise<void> {
    await this.last;
    this.beat();
    await this.last;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.last;
    await this.sql.end({ timeout: 5 });
  }
}
