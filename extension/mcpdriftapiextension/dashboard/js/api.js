// The API client: same origin, relative to the page (so a path prefix in
// front of the Collector keeps working), with the credential the operator
// entered (auth.js).

import { authorization, markRequired } from './auth.js';

// ApiError is an error answer (apiwire.ErrorBody), or status 0 when
// the Collector did not answer at all.
class ApiError extends Error {
  constructor(status, code, message, parameter) {
    super(message);
    this.status = status;
    this.code = code;
    this.parameter = parameter;
  }
}

// api calls a route under api/v1/ and returns its JSON.
export async function api(route, { method = 'GET', body, signal } = {}) {
  const headers = { Accept: 'application/json' };
  const auth = authorization();
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch('api/v1/' + route, {
      method, headers, signal, cache: 'no-store', credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'The Collector did not answer (' + err.message + '). Is it running?');
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? parse(text) : null;
  } catch {
    if (res.ok) throw new ApiError(res.status, 'bad_response', 'The answer was not JSON.');
  }
  if (!res.ok) {
    if (res.status === 401) markRequired();
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || 'http_' + res.status, e.message || 'HTTP ' + res.status, e.parameter);
  }
  return data;
}

// route joins path segments, encoding each (names may hold any character).
export const route = (...segments) => segments.map(encodeURIComponent).join('/');

// parse keeps a number the server wrote in a form JavaScript would print
// differently (1.0, 1e3, 2^53+1) as raw JSON, so definitions show as sent.
// Browsers without JSON.rawJSON parse plainly.
function parse(text) {
  if (typeof JSON.rawJSON !== 'function') return JSON.parse(text);
  return JSON.parse(text, (key, value, context) =>
    typeof value === 'number' && context && context.source !== String(value) ? JSON.rawJSON(context.source) : value);
}
