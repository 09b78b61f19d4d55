// Served to a visit without the cookie. A link followed from another site
// (a webhook's, a chat's) does not carry the SameSite=Strict cookie; one
// reload from here is a same-site visit that does. Only once, so a browser
// that was never signed in stays on the message.
'use strict';
try {
  if (!sessionStorage.getItem('awtui-signin-reloaded')) {
    sessionStorage.setItem('awtui-signin-reloaded', '1');
    location.replace(location.href);
  } else {
    sessionStorage.removeItem('awtui-signin-reloaded');
  }
} catch (_) { /* storage off: stay on the message */ }
