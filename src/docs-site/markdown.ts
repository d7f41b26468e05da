// Markdown to HTML for the guides in docs/guides/: the subset they are written in (headings, paragraphs, lists,
// fenced code, tables, inline code, bold, italics and links). Every character of the source is escaped first, so a
// guide can show markup in its code samples and nothing in it becomes a script. Links may only be relative,
// same-site paths, fragments, http(s) or mailto; anything else is left as text.
import { escapeHtml } from '../site/html.ts';

export interface Rendered {
  html: string;
  /** The first `#` heading. */
  title: string;
  /** The first paragraph as plain text, for an index of pages. */
  summary: string;
  /** The `##` headings, for the page's table of contents. */
  sections: { id: string; text: string }[];
}

export const slugify = (text: string) =>
  text
    .toLowerCase()
    .replace(/<[^<>]*>|&[a-z]+;|[^a-z0-9\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-');

const SAFE_HREF = /^(\/(?!\/)|#|https?:\/\/|mailto:)/;

/** Inline markup of one escaped line: code spans first, so nothing inside them is read as markup. */
function inline(text: string): string {
  const spans: string[] = [];
  let out = escapeHtml(text).replace(/`([^`]+)`/g, (_m, code: string) => {
    spans.push(`<code>${code}</code>`);
    return `\uE000${spans.length - 1}\uE000`;
  });
  out = out
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    .replace(/\[([^[\]]+)\]\(([^()\s]+)\)/g, (m, label: string, href: string) =>
      SAFE_HREF.test(href.replace(/&amp;/g, '&')) ? `<a href="${href}">${label}</a>` : m,
    );
  return out.replace(/\uE000(\d+)\uE000/g, (_m, i: string) => spans[Number(i)]!);
}

const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());

export function renderMarkdown(source: string): Rendered {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  const sections: Rendered['sections'] = [];
  let title = '';
  let i = 0;
  const isBlockStart = (l: string) => /^(#{1,4} |```|[-*] |\d+\. |\|)/.test(l);
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = /^```(\w*)/.exec(line);
    if (fence) {
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) code.push(lines[i]!);
      i++;
      const lang = fence[1] ? ` class="language-${fence[1]}"` : '';
      out.push(`<pre><code${lang}>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,4}) (.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = inline(heading[2]!);
      const id = slugify(text);
      if (level === 1 && !title) title = heading[2]!.replace(/`/g, '');
      if (level === 2) sections.push({ id, text: heading[2]!.replace(/`/g, '') });
      out.push(`<h${level} id="${id}">${text}</h${level}>`);
      i++;
      continue;
    }
    if (line.startsWith('|') && /^\|[\s|:-]+\|$/.test(lines[i + 1]?.trim() ?? '')) {
      const head = cells(line);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(cells(lines[i]!));
      out.push(
        '<div class="scroll"><table><thead><tr>' +
          head.map((c) => `<th scope="col">${inline(c)}</th>`).join('') +
          '</tr></thead><tbody>' +
          rows.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`).join('') +
          '</tbody></table></div>',
      );
      continue;
    }
    const item = /^([-*]|\d+\.) /.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]!);
      const items: string[] = [];
      while (i < lines.length && /^([-*]|\d+\.) /.test(lines[i]!)) {
        let text = lines[i]!.replace(/^([-*]|\d+\.) /, '');
        for (i++; i < lines.length && /^ {2,}\S/.test(lines[i]!); i++) text += ` ${lines[i]!.trim()}`;
        items.push(`<li>${inline(text)}</li>`);
      }
      out.push(ordered ? `<ol>${items.join('')}</ol>` : `<ul>${items.join('')}</ul>`);
      continue;
    }
    const para: string[] = [];
    for (; i < lines.length && lines[i]!.trim() !== '' && (para.length === 0 || !isBlockStart(lines[i]!)); i++) {
      para.push(lines[i]!.trim());
    }
    out.push(`<p>${inline(para.join(' '))}</p>`);
  }
  const first = out.find((b) => b.startsWith('<p>')) ?? '';
  const summary = first
    .replace(/<[^<>]*>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
  return { html: out.join('\n'), title, summary: summary.replace(/&quot;/g, '"').replace(/&#39;/g, "'"), sections };
}
