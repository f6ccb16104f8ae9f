/** pip's environment for Forge's own installs: one retry and a shorter timeout unless the user set theirs. */
import { describe, expect, it } from 'vitest';
import { quickPipEnvironment } from '../../../stages/python/pip-environment.ts';

describe('quickPipEnvironment', () => {
  it('retries once with a 15 s timeout, keeping the rest of the environment', () => {
    expect(quickPipEnvironment({ PIP_FIND_LINKS: '/wheels', HOME: '/h' })).toEqual({ PIP_FIND_LINKS: '/wheels', HOME: '/h', PIP_RETRIES: '1', PIP_DEFAULT_TIMEOUT: '15' });
  });

  it("leaves the user's own retries and timeout alone", () => {
    expect(quickPipEnvironment({ PIP_RETRIES: '7', PIP_TIMEOUT: '60' })).toEqual({ PIP_RETRIES: '7', PIP_TIMEOUT: '60' });
    expect(quickPipEnvironment({ PIP_DEFAULT_TIMEOUT: '90' })).toEqual({ PIP_DEFAULT_TIMEOUT: '90', PIP_RETRIES: '1' });
  });
});
