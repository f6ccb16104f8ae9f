// The trace of a turn as a timeline: one row per span (the request, the
// turn, each model call with its tokens and latency, each tool call with
// its decision), indented under its parent, with a bar where it ran.
// A failed model call followed by another is a fallback, and says so.
import { html } from 'htm/preact';
import { formatMs } from './view-helpers.js';

export function traceSummaries(spansByTrace) {
  return [...spansByTrace.entries()]
    .map(([traceId, spans]) => {
      const turn = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
      const root = spans.find((s) => !spans.some((p) => p.spanId === s.parentSpanId)) ?? spans[0];
      const start = Math.min(...spans.map((s) => s.startTime));
      return { traceId, start, label: turn ? `turn · ${turn.attributes['gen_ai.conversation.id'] ?? ''}` : root.name, spans: spans.length };
    })
    .sort((a, b) => b.start - a.start);
}

function ordered(spans) {
  const children = new Map();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : 'root';
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(s);
  }
  const rows = [];
  const walk = (id, depth) => {
    for (const s of (children.get(id) ?? []).sort((a, b) => a.startTime - b.startTime)) {
      rows.push({ span: s, depth });
      walk(s.spanId, depth + 1);
    }
  };
  walk('root', 0);
  return rows;
}

function kindOf(span) {
  const op = span.attributes['gen_ai.operation.name'];
  if (op === 'chat') return 'model';
  if (op === 'execute_tool') return 'tool';
  if (op === 'invoke_agent') return 'turn';
  return 'request';
}

function details(span, rows) {
  const a = span.attributes;
  const kind = kindOf(span);
  const parts = [];
  if (kind === 'model') {
    // What the provider's prompt cache served is a fraction of the price: shown apart, as part of the input.
    const cached = a['gen_ai.usage.cache_read.input_tokens'] ? ` (${a['gen_ai.usage.cache_read.input_tokens']} cached)` : '';
    if (a['gen_ai.usage.input_tokens'] !== undefined) parts.push(`${a['gen_ai.usage.input_tokens']} in${cached} / ${a['gen_ai.usage.output_tokens']} out tokens`);
    if (a['forge.model.tool_calls']) parts.push(`${a['forge.model.tool_calls']} tool call${a['forge.model.tool_calls'] > 1 ? 's' : ''}`);
    const siblings = rows.filter((r) => r.span.parentSpanId === span.parentSpanId && kindOf(r.span) === 'model').map((r) => r.span);
    const previous = siblings[siblings.indexOf(span) - 1];
    if (previous && previous.status.code === 'error' && previous.endTime <= span.startTime + 1) parts.push(`fallback after ${previous.attributes['gen_ai.request.model']}`);
  }
  if (kind === 'tool') {
    if (a['forge.tool.category']) parts.push(a['forge.tool.category']);
    if (a['forge.approval.decision']) parts.push(`gate: ${a['forge.approval.decision']}${a['forge.approval.answer'] ? ` → ${a['forge.approval.answer']}` : ''}`);
    if (a['forge.tool.outcome'] && a['forge.tool.outcome'] !== 'ok' && !span.status.message) parts.push(a['forge.tool.outcome']);
    if (span.events.some((e) => e.name === 'forge.worker.start')) parts.push('worker started');
    if (a['forge.sandbox.isolation']) parts.push(`sandbox: ${a['forge.sandbox.isolation']}`);
  }
  if (kind === 'turn' && a['forge.turn.status']) parts.push(a['forge.turn.status']);
  if (kind === 'request' && a['http.response.status_code'] !== undefined) parts.push(`HTTP ${a['http.response.status_code']}`);
  if (span.status.code === 'error' && span.status.message) parts.push(span.status.message);
  return parts.join(' · ');
}

export function TraceTimeline({ spansByTrace, selected, onSelect }) {
  const summaries = traceSummaries(spansByTrace);
  const traceId = selected && spansByTrace.has(selected) ? selected : summaries[0]?.traceId;
  const spans = traceId ? spansByTrace.get(traceId) : [];
  const rows = ordered(spans);
  const start = Math.min(...spans.map((s) => s.startTime));
  const end = Math.max(...spans.map((s) => s.endTime));
  const total = Math.max(end - start, 0.001);
  return html`<section class="panel trace" aria-labelledby="trace-title">
    <header class="panel-head">
      <h2 id="trace-title">Trace</h2>
      <label class="sr-only" for="trace-select">Trace</label>
      <select id="trace-select" value=${traceId ?? ''} onChange=${(e) => onSelect(e.currentTarget.value)} disabled=${summaries.length === 0}>
        ${summaries.length === 0 ? html`<option value="">no traces yet</option>` : null}
        ${summaries.map((s) => html`<option value=${s.traceId}>${new Date(s.start).toLocaleTimeString()} · ${s.label} (${s.spans} span${s.spans === 1 ? '' : 's'})</option>`)}
      </select>
    </header>
    ${rows.length === 0
      ? html`<p class="muted empty">Every turn, model call and tool call appears here as it finishes.</p>`
      : html`<div class="timeline" role="table" aria-label="Spans of the selected trace">
          <div class="row head" role="row"><span role="columnheader">Span</span><span role="columnheader">When</span><span role="columnheader" class="dur">Duration</span></div>
          ${rows.map(({ span, depth }) => {
            const left = ((span.startTime - start) / total) * 100;
            const width = Math.max(((span.endTime - span.startTime) / total) * 100, 0.6);
            return html`<div class=${`row kind-${kindOf(span)}${span.status.code === 'error' ? ' failed' : ''}`} role="row" key=${span.spanId}>
              <span class="name" role="cell" style=${`padding-left:${depth * 14}px`}>
                <span class="span-name">${span.name}</span>
                <span class="span-info">${details(span, rows)}</span>
              </span>
              <span class="bar-cell" role="cell" aria-hidden="true"><span class="bar" style=${`left:${left}%;width:${width}%`}></span></span>
              <span class="dur" role="cell">${formatMs(span.endTime - span.startTime)}</span>
            </div>`;
          })}
        </div>`}
  </section>`;
}
