/**
 * The pip forge package runs for the image's venv layer fails fast on an
 * unreachable index, as the project venv's does (package-image.test.ts
 * checks what pip is really started with).
 */
import { describe, expect, it } from 'vitest';
import { layerPipEnvironment } from '../../../stages/package/python-layer.ts';

describe('layerPipEnvironment', () => {
  it("carries Forge's quick retries and timeout, and the user's pip settings", () => {
    expect(layerPipEnvironment({ PIP_INDEX_URL: 'http://index.example/simple' })).toEqual({ PIP_INDEX_URL: 'http://index.example/simple', PIP_RETRIES: '1', PIP_DEFAULT_TIMEOUT: '15', PIP_NO_WARN_SCRIPT_LOCATION: '1' });
  });
});
