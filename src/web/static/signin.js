// awtui web: signing the page in. Nothing ambient: no cookie grants
// anything (a browser hands a 127.0.0.1 cookie to every port of
// 127.0.0.1). The address awtui web prints carries a one-time sign-in
// token in its fragment (#token=…), which no browser sends to a server;
// this script takes it out of the address before anything else runs,
// exchanges it at /api/signin for a session value and keeps only that, in
// this origin's localStorage (scheme, host and port: no other port's page
// reads it). Every request and the live stream carry it in Authorization.
'use strict';

const awtuiAuth = (() => {
  const KEY = 'awtui-session';
  let memory = '';
  let pending = '';
  // #token=T, maybe with other parameters (#token=T&i=ID): the token goes
  // (into `pending`), the rest stays. Whether there was one.
  function takeToken() {
    const params = location.hash.slice(1).split('&').filter((p) => p);
    const rest = params.filter((p) => !p.startsWith('token='));
    if (rest.length === params.length) return false;
    pending = params.find((p) => p.startsWith('token=')).slice('token='.length);
    history.replaceState(null, '', location.pathname + location.search + (rest.length ? '#' + rest.join('&') : ''));
    return true;
  }
  takeToken();
  // The address opened in a tab already on the page changes only the
  // fragment (no new load): sign in, then start afresh.
  window.addEventListener('hashchange', () => {
    if (takeToken()) signIn().finally(() => location.reload());
  });

  function session() {
    try { return localStorage.getItem(KEY) || memory; } catch (_) { return memory; }
  }

  function keep(value) {
    memory = value;
    try { localStorage.setItem(KEY, value); } catch (_) { /* storage off: this page only */ }
  }

  // The headers of a request to the API: `extra` and the session.
  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const s = session();
    if (s) h.Authorization = 'Bearer ' + s;
    return h;
  }

  // Spends the token from the address, if there was one. A spent one (the
  // same address opened again) leaves the session already kept.
  async function signIn() {
    if (!pending) return;
    const token = pending;
    pending = '';
    const r = await fetch('/api/signin', {
      method: 'POST', credentials: 'omit', cache: 'no-store',
      headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + token},
      body: '{}',
    });
    const body = await r.json().catch(() => ({}));
    if (r.ok && body.session) keep(body.session);
  }

  // A server-sent event stream read with fetch (EventSource cannot send a
  // header): `on.message(data)` for each event, `on.open()`, `on.error()`
  // before each reconnection, `on.denied()` once on a 401 (then it stops).
  function stream(path, on) {
    let delay = 500;
    async function once() {
      try {
        const r = await fetch(path, {headers: headers({Accept: 'text/event-stream'}), credentials: 'omit', cache: 'no-store'});
        if (r.status === 401) { on.denied(); return false; }
        if (!r.ok || !r.body) return true;
        on.open();
        delay = 500;
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const {value, done} = await reader.read();
          if (done) return true;
          buf = (buf + value).replace(/\r\n?/g, '\n');
          let at;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            const data = block.split('\n').filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
            if (data) on.message(data);
          }
        }
      } catch (_) {
        return true;
      }
    }
    (async () => {
      while (await once()) {
        on.error();
        await new Promise((done) => setTimeout(done, delay));
        delay = Math.min(delay * 2, 5000);
      }
    })();
  }

  return {headers, signIn, stream};
})();
