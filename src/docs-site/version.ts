// The API's version: the date of the newest entry of docs/changelog.md, so the OpenAPI document, the JSON index at /
// and the changelog cannot disagree (docs/api.md#versioning).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CHANGELOG_PATH = join(import.meta.dirname, '..', '..', 'docs', 'changelog.md');

/** The first `## YYYY-MM-DD` heading of a changelog. */
export function latestVersion(changelog: string): string {
  const match = /^## (\d{4}-\d{2}-\d{2})\s*$/m.exec(changelog);
  if (!match) throw new Error('docs/changelog.md has no "## YYYY-MM-DD" entry');
  return match[1]!;
}

export const API_VERSION = latestVersion(readFileSync(CHANGELOG_PATH, 'utf8'));
