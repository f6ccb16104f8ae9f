/**
 * The bundle archive's members and the image layers are compressed so that
 * their bytes do not depend on the builder's platform: the gzip header's OS
 * byte is 255 ("unknown"), where zlib writes the one it was built for.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipMembers } from '../../stages/archive-members.ts';
import { writeLayer } from '../../stages/package/layer-writer.ts';
import { portableGzip, portableGzipSync } from '../../stages/portable-gzip.ts';

const OS_BYTE = 9;
const data = Buffer.from('the same bytes on every machine\n'.repeat(50));

describe('portable gzip', () => {
  it('says "unknown" for the OS where zlib names this one, on the pool and on this thread alike', async () => {
    // What zlib writes here (3: Unix): the byte the builder's platform would otherwise put in every digest.
    expect(gzipSync(data)[OS_BYTE]).not.toBe(255);
    const pooled = await portableGzip(data, 6);
    const inline = portableGzipSync(data, 6);
    expect(pooled[OS_BYTE]).toBe(255);
    expect(inline.equals(pooled)).toBe(true);
    expect(gunzipSync(pooled).equals(data)).toBe(true);
  });

  it('is what the archive\'s members and an image layer are compressed with', async () => {
    const members = await gzipMembers([{ bytes: data, shared: false }, { bytes: data, shared: true }]);
    expect(members.map((member) => member[OS_BYTE])).toEqual([255, 255]);
    const layer = await writeLayer([{ path: '/opt/agent/a.txt', type: 'file', data }]);
    expect(layer.blob[OS_BYTE]).toBe(255);
  });
});
