/**
 * A hand-written SVG of throughput and p99 per server per scenario: two panels of grouped bars
 * (one group per scenario × concurrency, one bar per server), each bar labelled with its value.
 * Both axes are logarithmic (whole decades): the servers differ by two orders of magnitude.
 * Pure: rows in, SVG text out.
 */
import type { ServerName } from './options';

export interface ChartRow {
  /** e.g. "create c=32". */
  group: string;
  server: ServerName;
  rps: number;
  p99: number;
}

export const SERVER_COLORS: Record<ServerName, string> = {
  relay: '#d1495b',
  'sdk-postgres': '#2e86ab',
  'sdk-memory': '#7fb7d8',
  floor: '#8c8c8c',
};

const LABELS: Record<ServerName, string> = {
  relay: 'AgentRelay',
  'sdk-postgres': 'A2A SDK + Postgres',
  'sdk-memory': 'A2A SDK in-memory',
  floor: 'floor: node:http + 1 INSERT',
};

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function label(value: number): string {
  if (!Number.isFinite(value)) return '–';
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** The whole decades that hold every positive value: [10^floor(log min), 10^ceil(log max)], at least one decade wide. */
export function decades(values: readonly number[]): { low: number; high: number } {
  const positive = values.filter((value) => Number.isFinite(value) && value > 0);
  if (positive.length === 0) return { low: 1, high: 10 };
  const low = Math.floor(Math.log10(Math.min(...positive)));
  const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...positive))));
  return { low: 10 ** low, high: 10 ** high };
}

/** Height of a bar on a log axis from `low` (0) to `high` (full); values at or under `low` get a sliver. */
export function logHeight(value: number, low: number, high: number, full: number): number {
  if (!(value > low)) return 1;
  return Math.max(1, (Math.log10(value / low) / Math.log10(high / low)) * full);
}

export function renderChart(rows: readonly ChartRow[], title: string): string {
  const groups = [...new Set(rows.map((row) => row.group))];
  const servers = (['relay', 'sdk-postgres', 'sdk-memory', 'floor'] as const).filter((server) => rows.some((row) => row.server === server));
  const barWidth = 16;
  const groupGap = 26;
  const groupWidth = Math.max(1, servers.length) * barWidth + groupGap;
  const left = 70;
  const panelHeight = 220;
  const width = Math.max(640, left + groups.length * groupWidth + 20);
  const panels: Array<{ metric: 'rps' | 'p99'; title: string; top: number }> = [
    { metric: 'rps', title: 'Throughput (req/s, higher is better)', top: 100 },
    { metric: 'p99', title: 'p99 latency (ms, lower is better)', top: 100 + panelHeight + 110 },
  ];
  const height = panels[1].top + panelHeight + 100;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  // Legend.
  servers.forEach((server, index) => {
    const x = left + index * 190;
    out.push(
      `<rect x="${x}" y="38" width="12" height="12" fill="${SERVER_COLORS[server]}"/>`,
      `<text x="${x + 16}" y="48">${escapeXml(LABELS[server])}</text>`,
    );
  });
  for (const panel of panels) {
    const { low, high } = decades(rows.map((row) => row[panel.metric]));
    const bottom = panel.top + panelHeight;
    out.push(`<text x="${left}" y="${panel.top - 12}" font-size="13" font-weight="bold">${escapeXml(panel.title)} · log scale</text>`);
    for (let tick = low; tick <= high * 1.0001; tick *= 10) {
      const y = (bottom - logHeight(tick, low, high, panelHeight) + (tick === low ? 1 : 0)).toFixed(1);
      out.push(
        `<line x1="${left}" y1="${y}" x2="${width - 10}" y2="${y}" stroke="#e5e5e5"/>`,
        `<text x="${left - 6}" y="${Number(y) + 4}" text-anchor="end" fill="#555">${escapeXml(tick >= 1 ? Math.round(tick).toLocaleString('en-US') : String(Number(tick.toPrecision(1))))}</text>`,
      );
    }
    groups.forEach((group, groupIndex) => {
      const x0 = left + groupIndex * groupWidth + groupGap / 2;
      servers.forEach((server, serverIndex) => {
        const row = rows.find((candidate) => candidate.group === group && candidate.server === server);
        if (!row || !Number.isFinite(row[panel.metric])) return;
        const value = row[panel.metric];
        const barHeight = logHeight(value, low, high, panelHeight);
        const x = x0 + serverIndex * barWidth;
        out.push(
          `<rect class="bar" data-metric="${panel.metric}" data-server="${server}" data-group="${escapeXml(group)}" data-value="${value}" x="${x}" y="${(bottom - barHeight).toFixed(1)}" width="${barWidth - 2}" height="${barHeight.toFixed(1)}" fill="${SERVER_COLORS[server]}"><title>${escapeXml(`${LABELS[server]} · ${group}: ${label(value)}`)}</title></rect>`,
          `<text x="${x + (barWidth - 2) / 2}" y="${(bottom - barHeight - 3).toFixed(1)}" font-size="8" text-anchor="start" transform="rotate(-90 ${x + (barWidth - 2) / 2} ${(bottom - barHeight - 3).toFixed(1)})" dy="3">${escapeXml(label(value))}</text>`,
        );
      });
      const cx = x0 + (servers.length * barWidth) / 2;
      out.push(`<text x="${cx}" y="${bottom + 12}" text-anchor="end" transform="rotate(-35 ${cx} ${bottom + 12})">${escapeXml(group)}</text>`);
    });
    out.push(`<line x1="${left}" y1="${bottom}" x2="${width - 10}" y2="${bottom}" stroke="#333"/>`);
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
