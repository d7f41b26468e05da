// Progress on stderr: a redrawn bar on a TTY (rows, rows/s, percent and ETA from bytes read), plain lines every
// 10 s otherwise (logs, CI), nothing with --quiet.
export class Progress {
  private readonly started = Date.now();
  private last = 0;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly totalBytes: number | null,
    private readonly mode: 'tty' | 'plain' | 'quiet',
  ) {}

  static mode(quiet: boolean): 'tty' | 'plain' | 'quiet' {
    return quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain';
  }

  tick(rows: number, bytes: number) {
    if (this.mode === 'quiet') return;
    const now = Date.now();
    if (now - this.last < (this.mode === 'tty' ? 200 : 10_000)) return;
    this.last = now;
    const secs = (now - this.started) / 1000;
    const rate = secs > 0 ? rows / secs : 0;
    let pct = '';
    let eta = '';
    if (this.totalBytes && bytes > 0) {
      const f = Math.min(1, bytes / this.totalBytes);
      pct = `${(f * 100).toFixed(0).padStart(3)}%`;
      eta = ` ETA ${clock(f > 0 ? secs / f - secs : 0)}`;
    }
    const line = `${this.label} ${rows.toLocaleString('en-US')} rows  ${Math.round(rate).toLocaleString('en-US')} rows/s  ${pct}${eta}`;
    if (this.mode === 'tty') {
      const width = 24;
      const filled = this.totalBytes ? Math.round((Math.min(1, bytes / this.totalBytes) || 0) * width) : 0;
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${line}\x1b[K`);
      this.drawn = true;
    } else process.stderr.write(line + '\n');
  }

  /** A phase message (e.g. merging) on its own line. */
  note(message: string) {
    if (this.mode === 'quiet') return;
    if (this.drawn) process.stderr.write('\n');
    this.drawn = false;
    process.stderr.write(`${this.label} ${message}\n`);
  }

  end() {
    if (this.drawn) process.stderr.write('\n');
    this.drawn = false;
  }
}

function clock(secs: number) {
  const s = Math.max(0, Math.round(secs));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
