// Forge studio: the agent's tools, a chat with it, and the trace of every
// turn, live from the dev server (`forge run --dev`).
import { html } from 'htm/preact';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, getJson, hasToken, stream } from './api.js';
import { ChatPanel } from './chat-panel.js';
import { restoredChat } from './restore-chat.js';
import { ToolsPanel } from './tools-panel.js';
import { TraceTimeline } from './trace-timeline.js';

const newContextId = () => `studio-${Math.random().toString(36).slice(2, 10)}`;

function App() {
  const [info, setInfo] = useState(undefined);
  const [tools, setTools] = useState([]);
  const [toolsError, setToolsError] = useState(undefined);
  const [spans, setSpans] = useState([]);
  const [live, setLive] = useState('connecting');
  const [selectedTrace, setSelectedTrace] = useState(undefined);
  const [chat, setChat] = useState(() => ({ contextId: sessionStorage.getItem('forge-studio-context') ?? newContextId(), items: [], busy: false }));
  const [fatal, setFatal] = useState(undefined);

  const loadTools = useCallback(async () => {
    try {
      setTools((await getJson('/tools')).tools);
      setToolsError(undefined);
    } catch (err) {
      setToolsError(err.message);
    }
  }, []);

  useEffect(() => {
    getJson('/studio/api/info').then(setInfo, (err) => setFatal(err));
    loadTools();
    // The conversation this tab had before a reload: what the model has, and any approval it still waits for.
    const contextId = chat.contextId;
    getJson(`/studio/api/history?contextId=${encodeURIComponent(contextId)}`).then(
      ({ items }) => setChat((c) => restoredChat(c, contextId, items)),
      () => {},
    );
  }, []);

  // The live feed: spans as they finish, tool list changes; reconnects after a dev restart.
  useEffect(() => {
    let stopped = false;
    const controller = new AbortController();
    const connect = async () => {
      while (!stopped) {
        try {
          await stream('/studio/api/events', { method: 'GET' }, (event, data) => {
            if (event === 'hello') {
              setLive('live');
              setSpans(data.spans);
            } else if (event === 'span') setSpans((s) => [...s.slice(-999), data]);
            else if (event === 'tools') loadTools();
          }, controller.signal);
        } catch (err) {
          if (stopped) return;
          if (err instanceof ApiError && err.status === 401) return setFatal(err);
        }
        setLive('reconnecting');
        await new Promise((r) => setTimeout(r, 1000));
        loadTools();
      }
    };
    connect();
    return () => {
      stopped = true;
      controller.abort();
    };
  }, []);

  useEffect(() => sessionStorage.setItem('forge-studio-context', chat.contextId), [chat.contextId]);

  const spansByTrace = useMemo(() => {
    const map = new Map();
    for (const s of spans) {
      if (!map.has(s.traceId)) map.set(s.traceId, []);
      map.get(s.traceId).push(s);
    }
    return map;
  }, [spans]);
  const toolSpans = useMemo(() => new Map(spans.filter((s) => s.attributes['gen_ai.tool.call.id']).map((s) => [s.attributes['gen_ai.tool.call.id'], s])), [spans]);

  const runTurn = async (path, body) => {
    setChat((c) => ({ ...c, busy: true }));
    const update = (fn) => setChat((c) => ({ ...c, items: fn(c.items) }));
    let traceId;
    try {
      await stream(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, (event, data) => {
        if (event === 'start') {
          traceId = data.traceId;
          if (traceId) setSelectedTrace(traceId);
        } else if (event === 'text') {
          update((items) => {
            const last = items[items.length - 1];
            if (last?.kind === 'assistant' && last.streaming) return [...items.slice(0, -1), { ...last, text: last.text + data.delta }];
            return [...items, { kind: 'assistant', text: data.delta, streaming: true }];
          });
        } else if (event === 'tool-call') {
          update((items) => [...items.map(doneStreaming), { kind: 'tool', ...data }]);
        } else if (event === 'tool-result') {
          update((items) => items.map((it) => (it.kind === 'tool' && it.id === data.id ? { ...it, result: data.result, durationMs: data.durationMs } : it)));
        } else if (event === 'approval-needed') {
          update((items) => [...items.map(doneStreaming), { kind: 'approval', requests: data.requests }]);
        } else if (event === 'done') {
          update((items) => [...items.map(doneStreaming), { kind: 'end', status: data.status === 'input-required' ? 'waiting for your approval' : data.status, traceId }]);
        } else if (event === 'failed') {
          update((items) => [...items.map(doneStreaming), { kind: 'error', text: data.message }]);
        }
      });
    } catch (err) {
      update((items) => [...items.map(doneStreaming), { kind: 'error', text: err.hint ? `${err.message} (${err.hint})` : err.message }]);
    } finally {
      setChat((c) => ({ ...c, busy: false }));
    }
  };

  const onSend = (text) => {
    setChat((c) => ({ ...c, items: [...c.items, { kind: 'user', text }] }));
    runTurn('/studio/api/chat', { contextId: chat.contextId, text });
  };
  const onAnswer = (item, answers) => {
    setChat((c) => ({ ...c, items: c.items.map((it) => (it === item ? { ...it, answered: answers } : it)) }));
    runTurn('/studio/api/approve', { contextId: chat.contextId, answers });
  };
  const onNewChat = () => setChat({ contextId: newContextId(), items: [], busy: false });

  if (fatal) {
    return html`<main class="fatal" role="alert">
      <h1>Forge studio</h1>
      <p>${fatal.status === 401 ? (hasToken() ? 'The token this tab has was not accepted (the agent may have a new one).' : 'This page needs the link that `forge run --dev` prints (it carries the access token).') : fatal.message}</p>
      <p class="muted">Open the studio link from the terminal again.</p>
    </main>`;
  }
  return html`<div class="app">
    <header class="top">
      <h1><span class="logo" aria-hidden="true">◆</span> ${info?.agentId ?? 'agent'} <span class="muted">studio</span></h1>
      <span class=${`live ${live}`} role="status">${live === 'live' ? 'live' : live === 'connecting' ? 'connecting…' : 'reconnecting…'}</span>
    </header>
    <main class="columns">
      <${ToolsPanel} tools=${tools} error=${toolsError} />
      <${ChatPanel} chat=${chat} toolSpans=${toolSpans} hasModel=${info?.model ?? false} onSend=${onSend} onAnswer=${onAnswer} onNewChat=${onNewChat} onShowTrace=${setSelectedTrace} />
      <${TraceTimeline} spansByTrace=${spansByTrace} selected=${selectedTrace} onSelect=${setSelectedTrace} />
    </main>
  </div>`;
}

function doneStreaming(item) {
  return item.kind === 'assistant' && item.streaming ? { ...item, streaming: false } : item;
}

const root = document.getElementById('studio');
root.textContent = ''; // the "Loading…" line
render(html`<${App} />`, root);
