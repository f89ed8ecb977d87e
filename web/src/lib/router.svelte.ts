// History routing inside /app/: the server answers index.html for any path
// under it.
export const route = $state({ path: location.pathname, search: location.search });

export function navigate(to: string, replace = false) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  route.path = location.pathname;
  route.search = location.search;
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  route.path = location.pathname;
  route.search = location.search;
});

// Same-app links navigate without reloading the page.
document.addEventListener('click', (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = (ev.target as Element).closest?.('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/app/')) return;
  ev.preventDefault();
  navigate(url.pathname + url.search);
});

/** Matches a pattern like /app/orgs/:id/members; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.replace(/\/+$/, '').split('/');
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}
