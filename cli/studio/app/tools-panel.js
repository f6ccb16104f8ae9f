// The agent's tools, each with a form from its input schema, a run button
// and the result. The list is fetched again whenever the server says the
// tools changed (hot reload, forged tools).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { runTool } from './api.js';
import { SchemaFields, fieldsOf, initialValues, toArguments } from './schema-form.js';
import { JsonView, formatMs } from './view-helpers.js';

export function ToolsPanel({ tools, error }) {
  const [open, setOpen] = useState(undefined);
  const [filter, setFilter] = useState('');
  const shown = tools.filter((t) => t.name.includes(filter.trim()));
  return html`<section class="panel tools" aria-labelledby="tools-title">
    <header class="panel-head">
      <h2 id="tools-title">Tools <span class="count">${tools.length}</span></h2>
      <label class="sr-only" for="tool-filter">Filter tools</label>
      <input id="tool-filter" class="filter" type="search" placeholder="Filter…" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
    </header>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <ul class="tool-list">
      ${shown.map((tool) => html`<li key=${tool.name}>
        <${ToolCard} tool=${tool} open=${open === tool.name} onToggle=${() => setOpen(open === tool.name ? undefined : tool.name)} />
      </li>`)}
    </ul>
  </section>`;
}

function ToolCard({ tool, open, onToggle }) {
  const fields = fieldsOf(tool.inputSchema);
  const [values, setValues] = useState(() => initialValues(fields));
  const [run, setRun] = useState(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const parsed = toArguments(fields, values);
    if (parsed.error) return setRun({ problem: parsed.error });
    setBusy(true);
    try {
      setRun(await runTool(tool.name, parsed.args));
    } catch (err) {
      setRun({ problem: err.message });
    } finally {
      setBusy(false);
    }
  };
  const panelId = `tool-${tool.name}`;
  return html`<div class=${`tool-card${open ? ' open' : ''}`}>
    <button class="tool-toggle" aria-expanded=${open} aria-controls=${panelId} onClick=${onToggle}>
      <span class="tool-name">${tool.name}</span>
      <span class=${`badge cat-${tool.category}`}>${tool.category}</span>
      <span class="tool-desc">${tool.description}</span>
    </button>
    ${open
      ? html`<form id=${panelId} class="tool-form" onSubmit=${submit} aria-label=${`Run ${tool.name}`}>
          ${tool.tags?.length ? html`<p class="tags">${tool.tags.map((t) => html`<span class="tag">${t}</span>`)}</p>` : null}
          <${SchemaFields} tool=${tool.name} fields=${fields} values=${values} onChange=${setValues} />
          <div class="actions"><button type="submit" class="primary" disabled=${busy}>${busy ? 'Running…' : `Run ${tool.name}`}</button></div>
          ${run ? html`<${RunResult} run=${run} />` : null}
        </form>`
      : null}
  </div>`;
}

function RunResult({ run }) {
  if (run.problem) return html`<p class="error" role="alert">${run.problem}</p>`;
  const ok = run.result?.ok === true;
  return html`<div class=${`result ${ok ? 'ok' : 'failed'}`} role="status" aria-live="polite">
    <p class="result-head"><strong>${ok ? 'ok' : (run.result?.error?.code ?? `HTTP ${run.status}`)}</strong> <span class="muted">${formatMs(run.result?.durationMs ?? run.ms)}</span></p>
    ${ok ? html`<${JsonView} value=${run.result.value} />` : html`<p>${run.result?.error?.message}</p>${run.result?.error?.hint ? html`<p class="muted small">${run.result.error.hint}</p>` : null}`}
  </div>`;
}
