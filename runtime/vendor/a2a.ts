/**
 * The A2A SDK the runtime's A2A server uses, behind one module, prebuilt and
 * copied into the bundle's vendor/ as mcp.ts is. It loads with the protocol
 * endpoints, at the first /a2a or /mcp request (about 2 ms).
 *
 * Import SDK values from here, never from the packages (types are fine).
 */
export { AgentCard, Role, Task, TaskState } from '@a2a-js/sdk';
export { AgentEvent, defaultServerCallContextBuilder, DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, UnauthenticatedUser, V1PushNotificationSerializer } from '@a2a-js/sdk/server';
export { LegacyJsonRpcTransportHandler, V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
export { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
