// The 67 counties as the importers need them: by slug or name (for --county and the delinquency CSV's county
// column) and by FDOR CO_NO (for NAL/SDF rows, routed by the data, never by file name).
import type postgres from 'postgres';
import { ImportError } from './errors.ts';

export interface County {
  id: number;
  co_no: number;
  slug: string;
  name: string;
  tax_certificate_vendor: string | null;
}

export class Counties {
  private readonly byKey = new Map<string, County>();
  private readonly byId = new Map<number, County>();

  private constructor(rows: County[]) {
    for (const c of rows) {
      this.byId.set(c.id, c);
      this.byKey.set(c.slug, c);
      this.byKey.set(c.name.toLowerCase(), c);
    }
  }

  static async load(sql: postgres.Sql) {
    return new Counties(
      await sql<
        County[]
      >`SELECT id::int, co_no::int, slug, name, tax_certificate_vendor FROM core.counties ORDER BY id`,
    );
  }

  /** A slug or name, case-insensitive (`miami-dade`, `Miami-Dade`, `liberty`); undefined when unknown. */
  find(key: string): County | undefined {
    const k = key.trim().toLowerCase();
    return this.byKey.get(k) ?? this.byKey.get(k.replace(/[\s.]+/g, '-')) ?? this.byKey.get(k.replace(/[\s.]+/g, ''));
  }

  /** --county: an unknown value is a one-line error naming it. */
  option(key: string): County {
    const c = this.find(key);
    if (!c) throw new ImportError(`--county: unknown county '${key}' (use a slug such as miami-dade or liberty)`);
    return c;
  }

  byCoNo(coNo: number): County | undefined {
    return this.byId.get(coNo - 10);
  }

  get(id: number): County {
    return this.byId.get(id)!;
  }
}
