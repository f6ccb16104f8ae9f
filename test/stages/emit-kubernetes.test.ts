/**
 * `forge build` writes k8s/: manifests the Kubernetes API accepts (checked
 * against its schemas, unknown keys refused), derived from the agent (model
 * keys, egress), deterministic and recorded in checksums.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { unknownKeys, validateWithSchemas } from '../helpers/kubernetes-schemas.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { deployment } from '../../stages/kubernetes/workload.ts';
import { secretTemplate } from '../../stages/kubernetes/service.ts';

const FILES = ['k8s/deployment.yaml', 'k8s/service.yaml', 'k8s/pdb.yaml', 'k8s/networkpolicy.yaml', 'k8s/optional/hpa.yaml', 'k8s/secret-template/secret.yaml'];

let project: string;
let objects: Record<string, any>;

beforeAll(async () => {
  project = writeProject({
    'forge.yaml': minimalConfig(
      [
        'model:',
        '  provider: openai',
        '  name: gpt-4o-mini',
        '  fallbacks: [{ provider: anthropic, name: claude-sonnet-4-5 }]',
        'env_passthrough: [GITHUB_TOKEN]',
        'egress:',
        '  mode: allowlist',
        '  allowed_domains: [api.github.com]',
        '  allowed_addresses: [10.1.2.3, 192.168.5.0/24, 127.0.0.1, "10.7.0.9:8080", "[fd00::9]:8080", "10.7.0.10:5000", "10.1.2.3:9000", "[64:ff9b::a07:b]:7000"]',
        '',
      ].join('\n'),
    ),
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  objects = Object.fromEntries(FILES.map((f) => [f, parse(readFileSync(join(project, '.forge-output', f), 'utf8'))]));
}, 60_000);

describe('k8s/ from forge build', () => {
  it.each(FILES)('%s is valid against the Kubernetes schema', (file) => {
    expect(() => validateWithSchemas(objects[file])).not.toThrow();
  });

  it('has no key the Kubernetes API does not know', () => {
    expect(unknownKeys(objects)).toEqual([]);
  });

  it('refuses an unknown key and a wrong type (the checks can fail)', () => {
    const typo = structuredClone(objects['k8s/deployment.yaml']);
    typo.spec.template.spec.containers[0].readinessProbes = typo.spec.template.spec.containers[0].readinessProbe;
    expect(unknownKeys({ typo }).join('\n')).toContain('readinessProbes');
    const wrong = structuredClone(objects['k8s/deployment.yaml']);
    wrong.spec.replicas = 'three';
    expect(() => validateWithSchemas(wrong)).toThrow(/replicas/);
  });

  it('runs replicas that share the state store, with probes, a preStop pause and a non-root container', () => {
    const deployment = objects['k8s/deployment.yaml'];
    expect(deployment.spec.replicas).toBe(3);
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.lifecycle.preStop).toEqual({ sleep: { seconds: 5 } });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(container.resources.requests).toEqual({ cpu: '250m', memory: '256Mi' });
    const secretRefs = container.env.filter((e: any) => e.valueFrom).map((e: any) => [e.name, e.valueFrom.secretKeyRef.name, e.valueFrom.secretKeyRef.optional ?? false]);
    expect(secretRefs).toEqual([
      ['FORGE_AUTH_TOKEN', 'test-agent-secrets', false],
      ['FORGE_STATE_URL', 'test-agent-secrets', false],
      ['ANTHROPIC_API_KEY', 'test-agent-secrets', false],
      ['OPENAI_API_KEY', 'test-agent-secrets', false],
      ['GITHUB_TOKEN', 'test-agent-secrets', true],
    ]);
    expect(Object.keys(objects['k8s/secret-template/secret.yaml'].stringData).sort()).toEqual(['ANTHROPIC_API_KEY', 'FORGE_AUTH_TOKEN', 'FORGE_STATE_URL', 'OPENAI_API_KEY']);
    expect(container.env.find((e: any) => e.name === 'FORGE_PUBLIC_URL').value).toBe('http://test-agent');
  });

  it('derives the NetworkPolicy from the egress policy', () => {
    const egress = objects['k8s/networkpolicy.yaml'].spec.egress;
    expect(egress).toContainEqual({
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: expect.arrayContaining(['10.0.0.0/8']) } }, { ipBlock: { cidr: '::/0', except: expect.arrayContaining(['fc00::/7', 'fe80::/10']) } }],
      ports: [{ port: 443, protocol: 'TCP' }, { port: 80, protocol: 'TCP' }],
    });
    expect(egress).toContainEqual({ ports: [{ port: 5432, protocol: 'TCP' }] });
    expect(egress).toContainEqual({ to: [{ ipBlock: { cidr: '10.1.2.3/32' } }, { ipBlock: { cidr: '192.168.5.0/24' } }] });
    // An entry with a port opens that port only (10.1.2.3 is already open on every port).
    expect(egress).toContainEqual({ to: [{ ipBlock: { cidr: '10.7.0.10/32' } }], ports: [{ port: 5000, protocol: 'TCP' }] });
    expect(egress).toContainEqual({ to: [{ ipBlock: { cidr: '10.7.0.9/32' } }, { ipBlock: { cidr: 'fd00::9/128' } }], ports: [{ port: 8080, protocol: 'TCP' }] });
    expect(egress.filter((rule: any) => JSON.stringify(rule).includes('10.7.0.9'))).toHaveLength(1);
    // A NAT64 address: the IPv4 the runtime judges it as, and the IPv6 the pod's packets go to.
    expect(egress).toContainEqual({ to: [{ ipBlock: { cidr: '10.7.0.11/32' } }, { ipBlock: { cidr: '64:ff9b::a07:b/128' } }], ports: [{ port: 7000, protocol: 'TCP' }] });
    expect(egress.some((rule: any) => rule.ports?.some((p: any) => p.port === 9000))).toBe(false);
    expect(JSON.stringify(egress)).not.toContain('127.0.0.1');
  });

  it('is byte-identical on a rebuild and recorded in checksums.json', async () => {
    const out = tempDir();
    expect((await forge(['build', '--prod', '--out', out], project)).code).toBe(0);
    for (const file of FILES) expect(readFileSync(join(out, file), 'utf8')).toBe(readFileSync(join(project, '.forge-output', file), 'utf8'));
    const checksums = JSON.parse(readFileSync(join(project, '.forge-output', 'checksums.json'), 'utf8'));
    for (const file of FILES) expect(checksums.files[file]).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the NetworkPolicy of endpoints off the usual ports', () => {
  let built: any;
  beforeAll(async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(
        [
          'model:',
          '  provider: openai',
          '  name: gpt-4o-mini',
          '  base_url: https://gateway.example.com:8443/v1',
          '  fallbacks: [{ provider: anthropic, name: claude-sonnet-4-5, base_url: "https://claude-proxy.example.com:9443" }]',
          'state: postgres://forge@pgbouncer.db:6432/forge',
          'tools:',
          '  - name: webhook_call',
          '    config: { webhooks: { deploy: "http://ci.example.com:8080/hooks/deploy" } }',
          'egress:',
          '  mode: allowlist',
          '  allowed_domains: [api.github.com, "git.example.com:2222"]',
          '',
        ].join('\n'),
      ),
    });
    const result = await forge(['build', '--prod', '--offline'], dir);
    expect(result.code, result.stderr).toBe(0);
    built = parse(readFileSync(join(dir, '.forge-output', 'k8s/networkpolicy.yaml'), 'utf8'));
  }, 60_000);

  it('opens the state URL\'s port, and each endpoint\'s port to public IPv4 and IPv6 addresses', () => {
    expect(() => validateWithSchemas(built)).not.toThrow();
    expect(unknownKeys({ built })).toEqual([]);
    const egress = built.spec.egress;
    expect(egress).toContainEqual({ ports: [{ port: 5432, protocol: 'TCP' }, { port: 6432, protocol: 'TCP' }] });
    const web = egress.find((rule: any) => rule.to?.[0]?.ipBlock?.cidr === '0.0.0.0/0');
    expect(web.to.map((t: any) => t.ipBlock.cidr)).toEqual(['0.0.0.0/0', '::/0']);
    expect(web.ports.map((p: any) => p.port)).toEqual([443, 80, 2222, 8080, 8443, 9443]);
  });
});

describe('the secrets adapters read, in k8s/', () => {
  const manifest = {
    agent_id: 'adapters',
    version: '1.0.0',
    model: { provider: 'openai', name: 'gpt-4o-mini' },
    env_passthrough: ['ITEMS_TOKEN', 'PLAIN_PASSTHROUGH'],
    apis: [
      { name: 'items', spec: 'items.yaml', base_url: 'https://items.example.com', timeout_ms: 1000, auth: { type: 'bearer', token_env: 'ITEMS_TOKEN' } },
      { name: 'legacy', spec: 'l.yaml', base_url: 'https://l.example.com', timeout_ms: 1000, auth: { type: 'basic', username_env: 'LEGACY_USER', password_env: 'LEGACY_PASS' } },
    ],
    mcp: {
      servers: [
        { name: 'fs', transport: 'stdio', command: 'mcp-fs', args: ['--root', '${FS_ROOT}'], env: { FS_LEVEL: '${FS_LEVEL}', LITERAL: 'costs $${NOT_A_VAR}' }, timeout_ms: 1000, required: true },
        { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', headers: { authorization: 'Bearer ${DOCS_TOKEN}' }, timeout_ms: 1000, required: false },
        // A peer Forge agent (its token is this one's own) and a path under HOME: neither is a second Secret entry.
        { name: 'peer', transport: 'http', url: 'https://peer.example.com/mcp', headers: { authorization: 'Bearer ${FORGE_AUTH_TOKEN}' }, timeout_ms: 1000, required: true },
        { name: 'home', transport: 'stdio', command: 'mcp-home', args: ['${HOME}/data'], timeout_ms: 1000, required: true },
      ],
    },
    tools: [{ name: 'webhook_call', config: { webhooks: { alert: { url: 'https://alerts.example.com', headers: { 'X-Token': '${ALERT_TOKEN}' } } } } }],
  } as unknown as AgentManifest;

  it('references every one from the Secret, an optional server\'s as optional, once each, and lists them in the template', () => {
    const env = (deployment(manifest) as any).spec.template.spec.containers[0].env as { name: string; valueFrom?: { secretKeyRef: { optional?: boolean } } }[];
    const refs = env.filter((e) => e.valueFrom).map((e) => [e.name, e.valueFrom!.secretKeyRef.optional ?? false]);
    expect(refs).toEqual([
      ['FORGE_AUTH_TOKEN', false],
      ['FORGE_STATE_URL', false],
      ['OPENAI_API_KEY', false],
      ['ALERT_TOKEN', false],
      ['DOCS_TOKEN', true],
      ['FS_LEVEL', false],
      ['FS_ROOT', false],
      ['ITEMS_TOKEN', false],
      ['LEGACY_PASS', false],
      ['LEGACY_USER', false],
      ['PLAIN_PASSTHROUGH', true],
    ]);
    expect(new Set(env.map((e) => e.name)).size).toBe(env.length);
    // Valid as Kubernetes reads it, as the built files are.
    expect(() => validateWithSchemas(deployment(manifest))).not.toThrow();
    expect(unknownKeys({ deployment: deployment(manifest), secret: secretTemplate(manifest) })).toEqual([]);
    const template = secretTemplate(manifest).stringData as Record<string, string>;
    expect(template.FORGE_AUTH_TOKEN).toMatch(/^REPLACE: a long random token/);
    expect(template.ITEMS_TOKEN).toBe('REPLACE: used by API items');
    expect(template.DOCS_TOKEN).toBe('REPLACE: used by MCP server docs (optional server: may be left out)');
    expect(template.ALERT_TOKEN).toBe('REPLACE: used by tool webhook_call');
    expect(Object.keys(template)).not.toContain('NOT_A_VAR');
  });
});
