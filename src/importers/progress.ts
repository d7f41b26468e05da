// Progress on stderr: a cli-progress bar on a TTY (rows, rows/s, percent and ETA from bytes read), plain lines
// every 10 s otherwise (logs, CI), nothing with --quiet.
import { SingleBar } from 'cli-progress';

/** How often a row count is formatted: the bar at most 5 times a second, plain lines every 10 s. */
const TTY_INTERVAL_MS = 200;
const PLAIN_INTERVAL_MS = 10_000;

export class Progress {
  private readonly started = Date.now();
  private last = 0;
  private bar: SingleBar | null = null;

  constructor(
    private readonly label: string,
    private readonly totalBytes: number | null,
    private readonly mode: 'tty' | 'plain' | 'quiet',
  ) {}

  static mode(quiet: boolean): 'tty' | 'plain' | 'quiet' {
    return quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain';
  }

  tick(rows: number, bytes: number) {
    const now = Date.now();
    if (now - this.last >= (this.mode === 'tty' ? TTY_INTERVAL_MS : PLAIN_INTERVAL_MS)) this.show(rows, bytes, now);
  }

  /** The reading's last line (at 100% when the total was known), and its rate in rows per second. */
  finish(rows: number, bytes: number): number {
    const rate = this.show(rows, bytes, Date.now());
    this.end();
    return rate;
  }

  /** Shows the counts at `now` (unless quiet) and returns the rate shown. */
  private show(rows: number, bytes: number, now: number): number {
    this.last = now;
    const secs = (now - this.started) / 1000;
    const rate = Math.round(secs > 0 ? rows / secs : 0);
    if (this.mode === 'quiet') return rate;
    const counts = { label: this.label, rows: rows.toLocaleString('en-US'), rate: rate.toLocaleString('en-US') };
    if (this.mode === 'tty') {
      if (!this.bar) {
        this.bar = new SingleBar({
          format: this.totalBytes
            ? '{label} [{bar}] {percentage}% ETA {eta_formatted}  {rows} rows  {rate} rows/s'
            : '{label} {rows} rows  {rate} rows/s',
          barsize: 24,
          linewrap: true, // leave the terminal's line wrapping alone
        });
        this.bar.start(this.totalBytes ?? 0, 0, counts);
      }
      this.bar.update(bytes, counts);
      return rate;
    }
    let share = '';
    if (this.totalBytes && bytes > 0) {
      const f = Math.min(1, bytes / this.totalBytes);
      share = `${(f * 100).toFixed(0).padStart(3)}% ETA ${clock(f > 0 ? secs / f - secs : 0)}`;
    }
    process.stderr.write(`${this.label} ${counts.rows} rows  ${counts.rate} rows/s  ${share}\n`);
    return rate;
  }

  /** A phase message (e.g. merging) on its own line. */
  note(message: string) {
    if (this.mode === 'quiet') return;
    this.end();
    process.stderr.write(`${this.label} ${message}\n`);
  }

  end() {
    this.bar?.stop();
    this.bar = null;
  }
}

function clock(secs: number) {
  const s = Math.max(0, Math.round(secs));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
