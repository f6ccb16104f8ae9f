// The chat: the model's answer as it streams, each tool call inline
// (arguments, result, duration, category, approval decision), and the
// approvals a turn waits for, approved or denied with one click.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { JsonView, formatMs } from './view-helpers.js';

export function ChatPanel({ chat, toolSpans, hasModel, onSend, onAnswer, onNewChat, onShowTrace }) {
  const [text, setText] = useState('');
  const log = useRef(null);
  useEffect(() => {
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [chat.items]);
  const submit = (e) => {
    e.preventDefault();
    if (!text.trim() || chat.busy) return;
    onSend(text);
    setText('');
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey) submit(e);
  };
  return html`<section class="panel chat" aria-labelledby="chat-title">
    <header class="panel-head">
      <h2 id="chat-title">Chat</h2>
      <span class="muted small">conversation ${chat.contextId}</span>
      <button class="ghost" onClick=${onNewChat} disabled=${chat.busy}>New chat</button>
    </header>
    <div class="chat-log" ref=${log} role="log" aria-live="polite" aria-label="Conversation">
      ${chat.items.length === 0 ? html`<p class="muted empty">${hasModel ? 'Ask the agent something. Its tool calls show up here, with their results and timings.' : 'No model is configured (add `model:` to forge.yaml). Tools can still be run on the left.'}</p>` : null}
      ${chat.items.map((item, i) => html`<${ChatItem} key=${i} item=${item} toolSpans=${toolSpans} onAnswer=${onAnswer} onShowTrace=${onShowTrace} busy=${chat.busy} />`)}
    </div>
    <form class="composer" onSubmit=${submit}>
      <label class="sr-only" for="chat-input">Message</label>
      <textarea id="chat-input" rows="2" placeholder=${hasModel ? 'Message the agent (Enter sends, Shift+Enter for a new line)' : 'No model configured'} value=${text} disabled=${!hasModel} onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
      <button type="submit" class="primary" disabled=${!hasModel || chat.busy || !text.trim()}>${chat.busy ? 'Working…' : 'Send'}</button>
    </form>
  </section>`;
}

function ChatItem({ item, toolSpans, onAnswer, onShowTrace, busy }) {
  switch (item.kind) {
    case 'user':
      return html`<div class="msg user"><span class="who">You</span><p>${item.text}</p></div>`;
    case 'assistant':
      return html`<div class="msg assistant"><span class="who">Agent</span><p>${item.text}${item.streaming ? html`<span class="cursor" aria-hidden="true">▍</span>` : null}</p></div>`;
    case 'tool':
      return html`<${ToolCallView} call=${item} span=${toolSpans.get(item.id)} />`;
    case 'approval':
      return html`<${ApprovalView} item=${item} onAnswer=${onAnswer} busy=${busy} />`;
    case 'end':
      return html`<div class="turn-end"><span class="muted small">${item.status}</span>${item.traceId ? html` <button class="link" onClick=${() => onShowTrace(item.traceId)}>Show trace</button>` : null}</div>`;
    default:
      return html`<p class="error" role="alert">${item.text}</p>`;
  }
}

function ToolCallView({ call, span }) {
  const attrs = span?.attributes ?? {};
  const answer = attrs['forge.approval.answer'];
  const decision = answer === 'approved' ? 'allow' : answer === 'denied' ? 'deny' : (attrs['forge.approval.decision'] ?? (call.result ? undefined : 'pending'));
  const answeredBy = answer ? `${answer} by you` : decision === 'allow' ? 'allowed by policy' : decision === 'deny' ? 'denied by policy' : decision;
  const state = !call.result ? 'running' : call.result.ok ? 'ok' : 'failed';
  return html`<div class=${`tool-call ${state}`}>
    <div class="tool-call-head">
      <span class="tool-icon" aria-hidden="true">⚙</span>
      <strong>${call.name}</strong>
      ${call.category ? html`<span class=${`badge cat-${call.category}`}>${call.category}</span>` : null}
      ${answeredBy ? html`<span class=${`badge decision-${decision}`}>${answeredBy}</span>` : null}
      <span class="grow"></span>
      <span class="muted small">${call.result ? [state === 'ok' ? 'ok' : call.result.error?.code, formatMs(call.durationMs)].filter(Boolean).join(' · ') : 'running…'}</span>
    </div>
    <details>
      <summary>Arguments and result</summary>
      <div class="io">
        <div><h4>Arguments</h4><${JsonView} value=${call.arguments} /></div>
        <div><h4>Result</h4>${call.result ? html`<${JsonView} value=${call.result.ok ? call.result.value : call.result.error} />` : html`<p class="muted">…</p>`}</div>
      </div>
    </details>
  </div>`;
}

function ApprovalView({ item, onAnswer, busy }) {
  if (item.answered) {
    return html`<div class="approval answered"><span class="muted small">${item.requests.map((r) => `${r.tool}: ${item.answered[r.callId] ? 'approved' : 'denied'}`).join(' · ')}</span></div>`;
  }
  const all = (yes) => Object.fromEntries(item.requests.map((r) => [r.callId, yes]));
  return html`<div class="approval" role="group" aria-label="Approval needed">
    <p class="approval-title">Approval needed</p>
    ${item.requests.map((r) => html`<div class="approval-request">
      <div><strong>${r.tool}</strong> <span class="muted small">${r.reason}</span></div>
      <${JsonView} value=${r.arguments} />
      ${item.requests.length > 1 ? html`<div class="actions">
        <button class="approve" disabled=${busy} onClick=${() => onAnswer(item, { ...all(false), [r.callId]: true })}>Approve only this</button>
      </div>` : null}
    </div>`)}
    <div class="actions">
      <button class="approve" disabled=${busy} onClick=${() => onAnswer(item, all(true))}>Approve${item.requests.length > 1 ? ' all' : ''}</button>
      <button class="deny" disabled=${busy} onClick=${() => onAnswer(item, all(false))}>Deny${item.requests.length > 1 ? ' all' : ''}</button>
    </div>
  </div>`;
}
