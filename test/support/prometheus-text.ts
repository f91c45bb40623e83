/**
 * A parser of the Prometheus text exposition format (version 0.0.4): `# HELP` / `# TYPE` lines and
 * samples `name{label="value",…} value [timestamp]`, with the format's escapes in label values and
 * help texts. Malformed lines, samples of undeclared families and duplicate series throw.
 */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  name: string;
  type: string;
  help: string;
  samples: PrometheusSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count', ''] };

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // Prometheus reads floats as Go does, NaN in any case; prom-client writes `Nan` for a gauge with no samples yet.
  if (text.toLowerCase() === 'nan') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`not a number: '${text}' in: ${line}`);
  return value;
}

function unescape(text: string, line: string, allowQuote: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = text[++i];
    if (next === 'n') out += '\n';
    else if (next === '\\') out += '\\';
    else if (next === '"' && allowQuote) out += '"';
    else throw new Error(`bad escape '\\${next ?? ''}' in: ${line}`);
  }
  return out;
}

/** Reads `{a="1",b="x\"y"}` starting at `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    while (line[i] === ' ') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const equals = line.indexOf('=', i);
    if (equals < 0) throw new Error(`label without a value in: ${line}`);
    const name = line.slice(i, equals).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name '${name}' in: ${line}`);
    if (line[equals + 1] !== '"') throw new Error(`label value not quoted in: ${line}`);
    let j = equals + 2;
    let raw = '';
    while (j < line.length && line[j] !== '"') {
      if (line[j] === '\\') {
        raw += line[j] + (line[j + 1] ?? '');
        j += 2;
      } else {
        raw += line[j++];
      }
    }
    if (j >= line.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`label '${name}' given twice in: ${line}`);
    labels[name] = unescape(raw, line, true);
    i = j + 1;
    while (line[i] === ' ') i++;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`expected ',' or '}' in: ${line}`);
  }
}

function familyOf(families: Map<string, PrometheusFamily>, sampleName: string): PrometheusFamily | undefined {
  const exact = families.get(sampleName);
  if (exact && !SUFFIXES[exact.type]) return exact;
  for (const [name, family] of families) {
    const suffixes = SUFFIXES[family.type];
    if (suffixes?.some((suffix) => sampleName === `${name}${suffix}`)) return family;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, PrometheusFamily>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const match = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!match) continue; // a plain comment
      const [, keyword, name, rest = ''] = match;
      if (!NAME.test(name)) throw new Error(`bad metric name '${name}' in: ${line}`);
      const family = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      families.set(name, family);
      if (keyword === 'HELP') family.help = unescape(rest, line, false);
      else {
        if (!TYPES.has(rest.trim())) throw new Error(`unknown type '${rest}' in: ${line}`);
        if (family.samples.length > 0) throw new Error(`TYPE after the samples of ${name}`);
        family.type = rest.trim();
      }
      continue;
    }
    const nameEnd = line.search(/[{\s]/);
    if (nameEnd <= 0) throw new Error(`malformed sample: ${line}`);
    const name = line.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`bad metric name '${name}' in: ${line}`);
    let labels: Record<string, string> = {};
    let rest = line.slice(nameEnd);
    if (line[nameEnd] === '{') {
      const parsed = parseLabels(line, nameEnd);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new Error(`malformed sample value in: ${line}`);
    const value = parseValue(fields[0], line);
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`bad timestamp in: ${line}`);
    const family = familyOf(families, name);
    if (!family) throw new Error(`sample of an undeclared metric: ${line}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    family.samples.push({ name, labels, value });
  }
  return families;
}

/** The samples of a scrape, with lookups by name and a subset of labels. */
export class PrometheusScrape {
  constructor(readonly families: Map<string, PrometheusFamily>) {}

  static parse(text: string): PrometheusScrape {
    return new PrometheusScrape(parsePrometheusText(text));
  }

  samples(name: string, labels: Record<string, string> = {}): PrometheusSample[] {
    const all = [...this.families.values()].flatMap((family) => family.samples);
    return all.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  }

  /** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((sum, sample) => sum + sample.value, 0);
  }

  has(name: string): boolean {
    return this.families.has(name);
  }
}
