/**
 * A small Petstore on loopback: a few operations of the Swagger Petstore
 * (test/fixtures/openapi/) implemented for real, under /v2, the spec's base path.
 */
import { startServer, type TestServer } from './http-server.ts';

interface Pet {
  id: number;
  name: string;
  photoUrls: string[];
  status?: string;
  category?: { id: number; name: string };
}

export const PETSTORE_API_KEY = 'special-key';

export async function startPetstore(): Promise<TestServer & { baseUrl: string; pets: Map<number, Pet> }> {
  const pets = new Map<number, Pet>([[1, { id: 1, name: 'doggie', photoUrls: [], status: 'available' }]]);
  let nextId = 100;
  const server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://petstore');
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const notFound = () => json(404, { code: 1, type: 'error', message: 'Pet not found' });
    const petId = /^\/v2\/pet\/(\d+)$/.exec(url.pathname)?.[1];

    if (req.method === 'POST' && url.pathname === '/v2/pet') {
      const pet = JSON.parse(req.body) as Pet;
      if (!pet.name || !Array.isArray(pet.photoUrls)) return json(405, { code: 405, message: 'Invalid input' });
      pet.id ??= nextId++;
      pets.set(pet.id, pet);
      return json(200, pet);
    }
    if (req.method === 'GET' && url.pathname === '/v2/pet/findByStatus') {
      const wanted = url.searchParams.getAll('status');
      return json(200, [...pets.values()].filter((p) => wanted.includes(p.status ?? '')));
    }
    if (petId && req.method === 'GET') return pets.has(Number(petId)) ? json(200, pets.get(Number(petId))) : notFound();
    if (petId && req.method === 'POST') {
      const pet = pets.get(Number(petId));
      if (!pet) return notFound();
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return json(415, { message: `expected a form, got ${req.headers['content-type']}` });
      const form = new URLSearchParams(req.body);
      if (form.has('name')) pet.name = form.get('name')!;
      if (form.has('status')) pet.status = form.get('status')!;
      return json(200, { code: 200, type: 'unknown', message: String(pet.id) });
    }
    if (petId && req.method === 'DELETE') {
      if (req.headers.api_key !== PETSTORE_API_KEY) return json(403, { code: 403, message: 'api_key header missing or wrong' });
      return pets.delete(Number(petId)) ? json(200, { code: 200, message: petId }) : notFound();
    }
    if (req.method === 'GET' && url.pathname === '/v2/store/inventory') {
      if (req.headers.authorization !== 'Bearer inventory-token') return json(401, { message: 'unauthorized' });
      const counts: Record<string, number> = {};
      for (const pet of pets.values()) counts[pet.status ?? 'none'] = (counts[pet.status ?? 'none'] ?? 0) + 1;
      return json(200, counts);
    }
    if (req.method === 'GET' && url.pathname === '/v2/user/login') {
      return res.writeHead(200, { 'content-type': 'text/plain', 'x-rate-limit': '5000' }).end(`logged in user session: ${url.searchParams.get('username')}`);
    }
    return json(404, { message: `no route ${req.method} ${url.pathname}` });
  });
  return { ...server, baseUrl: `${server.url}/v2`, pets };
}
