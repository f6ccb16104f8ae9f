/**
 * pip's environment for the installs Forge starts itself: the project's
 * .forge/python-venv (forge tool run, forge run) and forge package's venv
 * layer. pip's defaults (5 retries with backoff, a 15 s timeout per try)
 * make an unreachable index cost 10–20 s before the one-line "cannot find"
 * answer; one retry is enough to ride out a blip. The user's own
 * PIP_RETRIES / PIP_TIMEOUT / PIP_DEFAULT_TIMEOUT win, and everything else
 * (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf) is theirs as it is.
 */
export const QUICK_PIP_RETRIES = '1';
export const QUICK_PIP_TIMEOUT_SECONDS = '15';

export function quickPipEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    ...(env.PIP_RETRIES ? {} : { PIP_RETRIES: QUICK_PIP_RETRIES }),
    ...(env.PIP_TIMEOUT || env.PIP_DEFAULT_TIMEOUT ? {} : { PIP_DEFAULT_TIMEOUT: QUICK_PIP_TIMEOUT_SECONDS }),
  };
}
