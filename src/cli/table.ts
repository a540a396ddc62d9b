/**
 * The command line's one renderer for people: tables of short columns and `key  value` lines that
 * fit a terminal of 120 columns. What does not fit is cut with an ellipsis (ids never are); the
 * full records are what `--json` prints.
 */

/** The widest line the human output writes. */
export const maxLineChars = 120;

const gapChars = 2;
const ellipsis = '…';
const isoTimestamp = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/;

/** `text` cut to `maxChars` with an ellipsis when longer. */
export function shorten(text: string, maxChars: number): string {
  if (maxChars <= 0) return '';
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}${ellipsis}`;
}

/** A column whose values are kept whole: an id (`call_id`, `id`, …). */
function isIdColumn(header: string): boolean {
  return /(^|_)id$/i.test(header);
}

/**
 * A value as one line of text for people: `-` for nothing, timestamps to the second, objects as
 * `key=value` pairs, lists joined by commas (lists of objects by `; `); never JSON.
 */
export function plainText(value: unknown, inTable = false): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') {
    const time = inTable ? isoTimestamp.exec(value) : null;
    const text = time ? `${time[1]} ${time[2]}` : value;
    return text.replace(/\s+/g, ' ');
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '-';
    const objects = value.some((entry) => typeof entry === 'object' && entry !== null);
    return value.map((entry) => plainText(entry, inTable)).join(objects ? '; ' : ',');
  }
  if (typeof value === 'object') {
    const pairs = flatPairs(value as Record<string, unknown>);
    return pairs.length === 0 ? '-' : pairs.map(([key, entry]) => `${key}=${entry}`).join(' ');
  }
  return String(value);
}

function flatPairs(value: Record<string, unknown>, prefix = ''): [string, string][] {
  return Object.entries(value).flatMap(([key, entry]): [string, string][] =>
    typeof entry === 'object' && entry !== null && !Array.isArray(entry)
      ? flatPairs(entry as Record<string, unknown>, `${prefix}${key}.`)
      : [[`${prefix}${key}`, plainText(entry)]],
  );
}

/**
 * Rows as lines: a header row, then one aligned line per row, no line wider than `maxChars`. When
 * the natural widths do not fit, the columns that are not ids are narrowed from the right (values
 * cut with an ellipsis, down to their header's width): verbs put free text (names, prompts, reasons)
 * last. Should that not do, columns are left out from the right.
 */
export function renderTable(header: string[], rows: string[][], maxChars = maxLineChars): string[] {
  const whole = header.map(isIdColumn);
  const natural = header.map((title, index) =>
    Math.max(title.length, ...rows.map((row) => row[index]?.length ?? 0)),
  );
  const floor = header.map((title, index) =>
    whole[index] ? (natural[index] as number) : Math.min(natural[index] as number, Math.max(title.length, 6)),
  );
  let shown = header.map((_, index) => index);
  const widths = [...natural];
  const total = () =>
    shown.reduce((sum, index) => sum + (widths[index] as number), 0) + gapChars * (shown.length - 1);
  while (total() > maxChars) {
    const narrowable = shown.filter((index) => (widths[index] as number) > (floor[index] as number));
    const last = narrowable.at(-1);
    if (last !== undefined) {
      widths[last] = Math.max(floor[last] as number, (widths[last] as number) - (total() - maxChars));
      continue;
    }
    if (shown.length <= 1) break;
    shown = shown.slice(0, -1);
  }
  const line = (cells: string[]) =>
    shorten(
      shown
        .map((index) => shorten(cells[index] ?? '', widths[index] as number).padEnd(widths[index] as number))
        .join(' '.repeat(gapChars))
        .trimEnd(),
      maxChars,
    );
  return [line(header), ...rows.map(line)];
}

/** Records as a table of their keys (upper-case headers), values as plain text. */
export function recordsTable(records: Record<string, unknown>[], maxChars = maxLineChars): string[] {
  const columns = [...new Set(records.flatMap((record) => Object.keys(record)))];
  return renderTable(
    columns.map((column) => column.toUpperCase()),
    records.map((record) => columns.map((column) => plainText(record[column], true))),
    maxChars,
  );
}

/** Words of `text` in lines of at most `maxChars` (a word longer than that is split). */
export function wrapText(text: string, maxChars: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    let rest = word;
    while (rest.length > maxChars) {
      if (current !== '') lines.push(current);
      lines.push(rest.slice(0, maxChars));
      rest = rest.slice(maxChars);
      current = '';
    }
    if (current === '') current = rest;
    else if (current.length + 1 + rest.length <= maxChars) current = `${current} ${rest}`;
    else {
      lines.push(current);
      current = rest;
    }
  }
  lines.push(current);
  return lines;
}

/**
 * An object as aligned `key  value` lines; a long value wraps under itself, a list of objects
 * (e.g. a timeline) gets one line per entry.
 */
export function keyValueLines(value: Record<string, unknown>, maxChars = maxLineChars): string[] {
  const keyChars = Math.min(30, Math.max(...Object.keys(value).map((key) => key.length)));
  const indent = ' '.repeat(keyChars + gapChars);
  const valueChars = maxChars - indent.length;
  const lines: string[] = [];
  for (const [key, entry] of Object.entries(value)) {
    const entries =
      Array.isArray(entry) && entry.some((item) => typeof item === 'object' && item !== null)
        ? entry.map((item) => plainText(item))
        : [plainText(entry)];
    const wrapped = entries.flatMap((text) => wrapText(text, valueChars));
    wrapped.forEach((text, index) => {
      const label = index === 0 ? shorten(key, keyChars).padEnd(keyChars) : ' '.repeat(keyChars);
      lines.push(`${label}${' '.repeat(gapChars)}${text}`.trimEnd());
    });
  }
  return lines;
}
