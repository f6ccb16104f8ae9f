// A page opened again (a reload) shows the conversation the server keeps:
// the tab remembers its conversation id, the server its transcript
// (/studio/api/history). No DOM here: the tests run it in Node.

/**
 * The chat with the stored transcript in it. Only into the conversation it
 * was read for, and only while the page has shown nothing of its own yet
 * (a message sent meanwhile streams its own items, newer than the read).
 */
export function restoredChat(chat, contextId, items) {
  if (chat.contextId !== contextId || chat.items.length > 0 || !Array.isArray(items)) return chat;
  return { ...chat, items };
}
