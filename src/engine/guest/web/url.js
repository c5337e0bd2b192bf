// URL and URLSearchParams (WHATWG URL Standard) for what snippets build and
// take apart: special schemes (http, https, ws, wss, ftp, file) and others,
// relative references against a base, dot segments, percent-encoding of
// each component, default ports, IPv4 numbers, bracketed IPv6 (kept as
// written, lowercased), the application/x-www-form-urlencoded query. Not
// here: internationalised host names (a host outside ASCII is invalid:
// there is no IDNA table) and IPv6 compression. Loaded by guest/web.c.
(function (native) {
  'use strict';

  const kSpecialPorts = { 'ftp:': '21', 'file:': '', 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };
  const isSpecial = (scheme) => Object.prototype.hasOwnProperty.call(kSpecialPorts, scheme);

  const hex = (b) => '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();

  function utf8(text) {
    return new TextEncoder().encode(text);
  }

  // Percent-encodes the code points of `text` that `inSet` holds (by code
  // point) and every code point outside ASCII, as UTF-8 bytes.
  function encodeSet(text, inSet) {
    let out = '';
    for (const ch of text) {
      const c = ch.codePointAt(0);
      if (c < 0x80 && !inSet(c)) {
        out += ch;
      } else {
        for (const b of utf8(ch)) out += hex(b);
      }
    }
    return out;
  }
  const c0 = (c) => c < 0x20 || c > 0x7e;
  const fragmentSet = (c) => c0(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
  const querySet = (c) => c0(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
  const specialQuerySet = (c) => querySet(c) || c === 0x27;
  const pathSet = (c) => querySet(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
  const userinfoSet = (c) => pathSet(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d ||
    c === 0x40 || (c >= 0x5b && c <= 0x5e) || c === 0x7c;

  function percentDecodeBytes(text) {
    const bytes = utf8(text);
    const out = [];
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x25 && i + 2 < bytes.length) {
        const h = String.fromCharCode(bytes[i + 1], bytes[i + 2]);
        if (/^[0-9a-fA-F]{2}$/.test(h)) {
          out.push(parseInt(h, 16));
          i += 2;
          continue;
        }
      }
      out.push(b);
    }
    return new Uint8Array(out);
  }
  const decodeUtf8 = (bytes) => new TextDecoder().decode(bytes);

  // ---- hosts ----------------------------------------------------------

  function parseIPv4Number(part) {
    if (part === '') return NaN;
    let radix = 10;
    if (/^0[xX]/.test(part)) { part = part.slice(2); radix = 16; }
    else if (part.length > 1 && part[0] === '0') { part = part.slice(1); radix = 8; }
    if (part === '') return 0;
    const valid = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
    return valid.test(part) ? parseInt(part, radix) : NaN;
  }

  function endsInNumber(host) {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    const last = parts[parts.length - 1];
    return /^[0-9]+$/.test(last) || !Number.isNaN(parseIPv4Number(last)) && /^0[xX]/.test(last);
  }

  function parseIPv4(host) {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    if (parts.length > 4) return null;
    const numbers = parts.map(parseIPv4Number);
    if (numbers.some(Number.isNaN)) return null;
    for (let i = 0; i < numbers.length - 1; i++) if (numbers[i] > 255) return null;
    if (numbers[numbers.length - 1] >= 256 ** (5 - numbers.length)) return null;
    let address = numbers[numbers.length - 1];
    for (let i = 0; i < numbers.length - 1; i++) address += numbers[i] * 256 ** (3 - i);
    const out = [];
    for (let i = 3; i >= 0; i--) out.push(Math.floor(address / 256 ** i) % 256);
    return out.join('.');
  }

  const kForbiddenHost = /[\x00\t\n\r #/:<>?@[\\\]^|]/;
  const kForbiddenDomain = /[\x00-\x1f\t\n\r #%/:<>?@[\\\]^|\x7f]/;

  // Returns the serialised host, or null when it is invalid.
  function parseHost(input, special) {
    if (input.startsWith('[')) {
      if (!input.endsWith(']') || !/^\[[0-9a-fA-F:.]+\]$/.test(input) || !input.includes(':')) return null;
      return input.toLowerCase();
    }
    if (!special) {
      if (kForbiddenHost.test(input)) return null;
      return encodeSet(input, c0);
    }
    const domain = decodeUtf8(percentDecodeBytes(input));
    // No IDNA: ASCII only, lowercased.
    if (/[^\x00-\x7f]/.test(domain)) return null;
    const ascii = domain.toLowerCase();
    if (ascii === '' || kForbiddenDomain.test(ascii)) return null;
    if (endsInNumber(ascii)) return parseIPv4(ascii);
    return ascii;
  }

  // ---- the parser -----------------------------------------------------

  // A URL record: scheme ("https:"), username, password, host (null: none),
  // port ("" = default), path (array of segments, or a string: opaque),
  // query (null or string), fragment (null or string).
  function copy(r) {
    return { ...r, path: Array.isArray(r.path) ? r.path.slice() : r.path };
  }

  function isWindowsDriveLetter(segment) {
    return /^[a-zA-Z][:|]$/.test(segment);
  }

  // Appends the path in `input` to record.path (an array), resolving dot
  // segments.
  function parsePath(record, input) {
    const special = isSpecial(record.scheme);
    const segments = input.split(special ? /[/\\]/ : /\//);
    for (let i = 0; i < segments.length; i++) {
      const raw = segments[i];
      const last = i === segments.length - 1;
      const lower = raw.toLowerCase();
      if (lower === '..' || lower === '.%2e' || lower === '%2e.' || lower === '%2e%2e') {
        if (record.path.length > 0 && !(record.scheme === 'file:' && record.path.length === 1 &&
            isWindowsDriveLetter(record.path[0]))) {
          record.path.pop();
        }
        if (last) record.path.push('');
      } else if (lower === '.' || lower === '%2e') {
        if (last) record.path.push('');
      } else {
        record.path.push(encodeSet(raw, pathSet));
      }
    }
  }

  function parseAuthority(record, authority) {
    const special = isSpecial(record.scheme);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      const colon = userinfo.indexOf(':');
      record.username = encodeSet(colon >= 0 ? userinfo.slice(0, colon) : userinfo, userinfoSet);
      record.password = colon >= 0 ? encodeSet(userinfo.slice(colon + 1), userinfoSet) : '';
      authority = authority.slice(at + 1);
      if (authority === '') return false;
    }
    let hostText = authority;
    let port = '';
    const portMatch = /:([^:\]]*)$/.exec(authority);
    if (portMatch && !(authority.startsWith('[') && !authority.includes(']:'))) {
      hostText = authority.slice(0, portMatch.index);
      port = portMatch[1];
      if (!/^[0-9]*$/.test(port)) return false;
      if (port !== '') {
        const number = parseInt(port, 10);
        if (number > 65535) return false;
        port = String(number);
        if (kSpecialPorts[record.scheme] === port) port = '';
      }
    }
    if (hostText === '') {
      if (special && record.scheme !== 'file:') return false;
      if (port !== '' || at >= 0) return false;
      record.host = '';
      return true;
    }
    const host = parseHost(hostText, special);
    if (host === null) return false;
    record.host = record.scheme === 'file:' && host === 'localhost' ? '' : host;
    record.port = port;
    return true;
  }

  // Splits "path?query#fragment" into the record (path appended).
  function parseRest(record, rest, opaque) {
    let fragment = null;
    const hash = rest.indexOf('#');
    if (hash >= 0) {
      fragment = rest.slice(hash + 1);
      rest = rest.slice(0, hash);
    }
    let query = null;
    const question = rest.indexOf('?');
    if (question >= 0) {
      query = rest.slice(question + 1);
      rest = rest.slice(0, question);
    }
    if (opaque) {
      record.path = encodeSet(rest, c0);
    } else if (isSpecial(record.scheme)) {
      parsePath(record, rest.replace(/^[/\\]/, ''));
    } else if (rest !== '') {
      parsePath(record, rest.replace(/^\//, ''));
    }
    record.query = query === null ? null
      : encodeSet(query, isSpecial(record.scheme) ? specialQuerySet : querySet);
    record.fragment = fragment === null ? null : encodeSet(fragment, fragmentSet);
  }

  function parse(input, base) {
    input = String(input).replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '').replace(/[\t\n\r]/g, '');
    const schemeMatch = /^([a-zA-Z][a-zA-Z0-9+\-.]*):/.exec(input);
    if (schemeMatch) {
      const scheme = schemeMatch[1].toLowerCase() + ':';
      let rest = input.slice(schemeMatch[0].length);
      const record = { scheme, username: '', password: '', host: null, port: '', path: [], query: null, fragment: null };
      if (isSpecial(scheme)) {
        if (base && base.scheme === scheme && !/^[/\\]/.test(rest)) {
          return relative(rest, base);
        }
        if (scheme === 'file:') {
          if (/^[/\\]{2}/.test(rest)) {
            rest = rest.slice(2);
            const end = rest.search(/[/\\?#]/);
            const authority = end < 0 ? rest : rest.slice(0, end);
            if (authority !== '' && isWindowsDriveLetter(authority)) {
              record.host = '';
            } else {
              if (!parseAuthority(record, authority)) return null;
              rest = end < 0 ? '' : rest.slice(end);
            }
          } else {
            record.host = '';
          }
          parseRest(record, rest, false);
          return record;
        }
        rest = rest.replace(/^[/\\]+/, '');
        const end = rest.search(/[/\\?#]/);
        const authority = end < 0 ? rest : rest.slice(0, end);
        if (!parseAuthority(record, authority)) return null;
        parseRest(record, end < 0 ? '' : rest.slice(end), false);
        return record;
      }
      if (rest.startsWith('//')) {
        rest = rest.slice(2);
        const end = rest.search(/[/?#]/);
        if (!parseAuthority(record, end < 0 ? rest : rest.slice(0, end))) return null;
        parseRest(record, end < 0 ? '' : rest.slice(end), false);
        return record;
      }
      parseRest(record, rest, !rest.startsWith('/'));
      return record;
    }
    if (!base) return null;
    if (typeof base.path === 'string') {
      if (!input.startsWith('#')) return null;
      const record = copy(base);
      record.fragment = encodeSet(input.slice(1), fragmentSet);
      return record;
    }
    return relative(input, base);
  }

  function relative(input, base) {
    const special = isSpecial(base.scheme);
    const record = copy(base);
    record.fragment = null;
    const slash = special ? /^[/\\]/ : /^\//;
    const doubleSlash = special ? /^[/\\]{2}/ : /^\/\//;
    if (doubleSlash.test(input) && base.scheme !== 'file:') {
      const rest = input.slice(2);
      const end = rest.search(special ? /[/\\?#]/ : /[/?#]/);
      record.username = ''; record.password = ''; record.host = null; record.port = '';
      record.path = [];
      if (!parseAuthority(record, end < 0 ? rest : rest.slice(0, end))) return null;
      parseRest(record, end < 0 ? '' : rest.slice(end), false);
      return record;
    }
    if (slash.test(input)) {
      record.path = [];
      parseRest(record, input, false);
      return record;
    }
    if (input === '' ) return record;
    if (input.startsWith('?')) {
      parseRest(record, input, false);
      record.path = base.path.slice();
      return record;
    }
    if (input.startsWith('#')) {
      record.query = base.query;
      record.fragment = encodeSet(input.slice(1), fragmentSet);
      return record;
    }
    record.path = base.path.slice(0, -1);
    record.query = null;
    const hash = input.indexOf('#');
    const question = input.indexOf('?');
    const cut = [hash, question].filter((i) => i >= 0);
    const pathEnd = cut.length ? Math.min(...cut) : input.length;
    parsePath(record, input.slice(0, pathEnd));
    const tail = input.slice(pathEnd);
    const saved = record.path;
    record.path = [];
    parseRest(record, tail, false);
    record.path = saved;
    return record;
  }

  function serializePath(record) {
    if (typeof record.path === 'string') return record.path;
    let out = '';
    if (record.host === null && record.path.length > 1 && record.path[0] === '') out += '/.';
    for (const segment of record.path) out += '/' + segment;
    return out;
  }

  function serializeHost(record) {
    return record.host + (record.port !== '' ? ':' + record.port : '');
  }

  function serialize(record, excludeFragment = false) {
    let out = record.scheme;
    if (record.host !== null) {
      out += '//';
      if (record.username !== '' || record.password !== '') {
        out += record.username + (record.password !== '' ? ':' + record.password : '') + '@';
      }
      out += serializeHost(record);
    }
    out += serializePath(record);
    if (record.query !== null) out += '?' + record.query;
    if (!excludeFragment && record.fragment !== null) out += '#' + record.fragment;
    return out;
  }

  // ---- application/x-www-form-urlencoded --------------------------------

  function formDecode(text) {
    return decodeUtf8(percentDecodeBytes(text.replace(/\+/g, ' ')));
  }
  function parseForm(query) {
    const list = [];
    for (const piece of query.split('&')) {
      if (piece === '') continue;
      const equals = piece.indexOf('=');
      const name = equals >= 0 ? piece.slice(0, equals) : piece;
      const value = equals >= 0 ? piece.slice(equals + 1) : '';
      list.push([formDecode(name), formDecode(value)]);
    }
    return list;
  }
  function formEncode(text) {
    let out = '';
    for (const b of utf8(text)) {
      if (b === 0x20) out += '+';
      else if ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) ||
               b === 0x2a || b === 0x2d || b === 0x2e || b === 0x5f) out += String.fromCharCode(b);
      else out += hex(b);
    }
    return out;
  }
  const toUSV = (value) => String(value).toWellFormed();

  // ---- URLSearchParams ------------------------------------------------

  const paramsState = new WeakMap(); // params -> { list, url }
  function ps(params) {
    const found = paramsState.get(params);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }
  function update(state) {
    if (!state.url) return;
    const serialized = serializeForm(state.list);
    const record = urlState.get(state.url);
    record.query = serialized === '' ? null : serialized;
  }
  const serializeForm = (list) => list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&');

  class URLSearchParams {
    constructor(init = undefined) {
      let list = [];
      if (init !== undefined && init !== null && typeof init === 'object' || typeof init === 'function') {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const entry = Array.from(pair);
            if (entry.length !== 2) {
              throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            }
            list.push([toUSV(entry[0]), toUSV(entry[1])]);
          }
        } else {
          for (const key of Reflect.ownKeys(init)) {
            const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
            if (typeof key === 'string' && descriptor && descriptor.enumerable) {
              list.push([toUSV(key), toUSV(init[key])]);
            }
          }
        }
      } else if (init !== undefined) {
        let text = toUSV(init);
        if (text.startsWith('?')) text = text.slice(1);
        list = parseForm(text);
      }
      paramsState.set(this, { list, url: null });
    }
    get size() { return ps(this).list.length; }
    append(name, value) {
      const s = ps(this);
      s.list.push([toUSV(name), toUSV(value)]);
      update(s);
    }
    delete(name, value = undefined) {
      const s = ps(this);
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      s.list = s.list.filter(([k, x]) => !(k === name && (v === undefined || x === v)));
      update(s);
    }
    get(name) {
      name = toUSV(name);
      const found = ps(this).list.find(([k]) => k === name);
      return found ? found[1] : null;
    }
    getAll(name) {
      name = toUSV(name);
      return ps(this).list.filter(([k]) => k === name).map(([, v]) => v);
    }
    has(name, value = undefined) {
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      return ps(this).list.some(([k, x]) => k === name && (v === undefined || x === v));
    }
    set(name, value) {
      const s = ps(this);
      name = toUSV(name);
      value = toUSV(value);
      const index = s.list.findIndex(([k]) => k === name);
      if (index < 0) {
        s.list.push([name, value]);
      } else {
        s.list[index][1] = value;
        s.list = s.list.filter(([k], i) => i <= index || k !== name);
      }
      update(s);
    }
    sort() {
      const s = ps(this);
      // stable, by code units of the name
      s.list = s.list.map((e, i) => [e, i]).sort((a, b) =>
        a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]).map(([e]) => e);
      update(s);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
      const s = ps(this);
      for (let i = 0; i < s.list.length; i++) callback.call(thisArg, s.list[i][1], s.list[i][0], this);
    }
    *entries() { const s = ps(this); for (let i = 0; i < s.list.length; i++) yield [s.list[i][0], s.list[i][1]]; }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    toString() { return serializeForm(ps(this).list); }
  }
  URLSearchParams.prototype[Symbol.iterator] = URLSearchParams.prototype.entries;
  Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: 'URLSearchParams', configurable: true });

  // ---- URL --------------------------------------------------------------

  const urlState = new WeakMap(); // url -> record
  const urlParams = new WeakMap(); // url -> URLSearchParams
  function rec(url) {
    const found = urlState.get(url);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }
  function invalidUrl(input) {
    const error = new TypeError('Invalid URL');
    error.code = 'ERR_INVALID_URL';
    error.input = input;
    return error;
  }
  function parseBase(base) {
    if (base === undefined) return undefined;
    const record = parse(toUSV(base), undefined);
    if (record === null) throw invalidUrl(String(base));
    return record;
  }
  function refreshParams(url) {
    const params = urlParams.get(url);
    const record = rec(url);
    if (params) ps(params).list = record.query === null ? [] : parseForm(record.query);
  }

  class URL {
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
      const record = parse(toUSV(url), parseBase(base));
      if (record === null) throw invalidUrl(String(url));
      urlState.set(this, record);
    }
    static canParse(url, base = undefined) {
      try {
        return parse(toUSV(url), parseBase(base)) !== null;
      } catch {
        return false;
      }
    }
    get href() { return serialize(rec(this)); }
    set href(value) {
      const record = parse(toUSV(value), undefined);
      if (record === null) throw invalidUrl(String(value));
      urlState.set(this, record);
      refreshParams(this);
    }
    get origin() {
      const r = rec(this);
      if (r.scheme === 'blob:') {
        try { return new URL(serializePath(r)).origin; } catch { return 'null'; }
      }
      if (!isSpecial(r.scheme) || r.scheme === 'file:') return 'null';
      return r.scheme + '//' + serializeHost(r);
    }
    get protocol() { return rec(this).scheme; }
    set protocol(value) {
      const r = rec(this);
      const match = /^([a-zA-Z][a-zA-Z0-9+\-.]*)/.exec(toUSV(value));
      if (!match) return;
      const scheme = match[1].toLowerCase() + ':';
      if (isSpecial(scheme) !== isSpecial(r.scheme)) return;
      if (scheme === 'file:' && (r.username !== '' || r.password !== '' || r.port !== '')) return;
      if (r.scheme === 'file:' && r.host === '') return;
      r.scheme = scheme;
      if (kSpecialPorts[scheme] === r.port) r.port = '';
    }
    get username() { return rec(this).username; }
    set username(value) {
      const r = rec(this);
      if (r.host === null || r.host === '' || r.scheme === 'file:') return;
      r.username = encodeSet(toUSV(value), userinfoSet);
    }
    get password() { return rec(this).password; }
    set password(value) {
      const r = rec(this);
      if (r.host === null || r.host === '' || r.scheme === 'file:') return;
      r.password = encodeSet(toUSV(value), userinfoSet);
    }
    get host() {
      const r = rec(this);
      return r.host === null ? '' : serializeHost(r);
    }
    set host(value) {
      const r = rec(this);
      if (typeof r.path === 'string') return;
      const trial = copy(r);
      trial.username = ''; trial.password = '';
      const text = toUSV(value).split(/[/?#\\]/)[0];
      if (parseAuthority(trial, text.replace(/@/g, '%40'))) {
        r.host = trial.host;
        r.port = /:[0-9]*$/.test(text) || text.includes(':') ? trial.port : r.port;
      }
    }
    get hostname() {
      const r = rec(this);
      return r.host === null ? '' : r.host;
    }
    set hostname(value) {
      const r = rec(this);
      if (typeof r.path === 'string') return;
      const text = toUSV(value).split(/[/?#\\:]/)[0];
      if (text === '' && isSpecial(r.scheme) && r.scheme !== 'file:') return;
      const host = text === '' ? '' : parseHost(text, isSpecial(r.scheme));
      if (host !== null) r.host = host;
    }
    get port() { return rec(this).port; }
    set port(value) {
      const r = rec(this);
      if (r.host === null || r.host === '' || r.scheme === 'file:') return;
      const digits = /^[0-9]*/.exec(toUSV(value))[0];
      if (digits === '') {
        if (toUSV(value) === '') r.port = '';
        return;
      }
      const number = parseInt(digits, 10);
      if (number > 65535) return;
      r.port = kSpecialPorts[r.scheme] === String(number) ? '' : String(number);
    }
    get pathname() { return serializePath(rec(this)); }
    set pathname(value) {
      const r = rec(this);
      if (typeof r.path === 'string') return;
      r.path = [];
      const text = toUSV(value);
      const special = isSpecial(r.scheme);
      parsePath(r, special ? text.replace(/^[/\\]/, '') : text.replace(/^\//, ''));
    }
    get search() {
      const q = rec(this).query;
      return q === null || q === '' ? '' : '?' + q;
    }
    set search(value) {
      const r = rec(this);
      let text = toUSV(value);
      if (text === '') {
        r.query = null;
      } else {
        if (text.startsWith('?')) text = text.slice(1);
        r.query = encodeSet(text, isSpecial(r.scheme) ? specialQuerySet : querySet);
      }
      refreshParams(this);
    }
    get searchParams() {
      let params = urlParams.get(this);
      if (!params) {
        const r = rec(this);
        params = new URLSearchParams(r.query === null ? '' : r.query);
        ps(params).url = this;
        urlParams.set(this, params);
      }
      return params;
    }
    get hash() {
      const f = rec(this).fragment;
      return f === null || f === '' ? '' : '#' + f;
    }
    set hash(value) {
      const r = rec(this);
      let text = toUSV(value);
      if (text === '') {
        r.fragment = null;
        return;
      }
      if (text.startsWith('#')) text = text.slice(1);
      r.fragment = encodeSet(text, fragmentSet);
    }
    toString() { return this.href; }
    toJSON() { return this.href; }
  }
  for (const name of ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port',
                      'pathname', 'search', 'searchParams', 'hash']) {
    const descriptor = Object.getOwnPropertyDescriptor(URL.prototype, name);
    descriptor.enumerable = true;
    Object.defineProperty(URL.prototype, name, descriptor);
  }
  Object.defineProperty(URL.prototype, Symbol.toStringTag, { value: 'URL', configurable: true });

  return { URL, URLSearchParams };
})
