const enc = new TextEncoder();
console.log(enc.encoding, Array.from(enc.encode('h\u00e9\u20ac\u{1f600}')).join(','));
console.log(Array.from(enc.encode('\ud800x')).join(','), enc.encode().length);
const into = new Uint8Array(5);
console.log(JSON.stringify(enc.encodeInto('a\u20acb\u20ac', into)), Array.from(into).join(','));
const dec = new TextDecoder();
console.log(dec.encoding, dec.fatal, dec.ignoreBOM);
console.log(dec.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69])).length);
console.log(new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x68])).length);
console.log(JSON.stringify(dec.decode(new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82, 0x63, 0xf0, 0x9f, 0x98]))));
console.log(JSON.stringify(dec.decode(new Uint8Array([0xed, 0xa0, 0x80, 0xc0, 0xaf, 0xf4, 0x90, 0x80, 0x80]))));
try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0x61, 0x80])); } catch (e) { console.log('fatal', e.name); }
const s = new TextDecoder();
console.log(s.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) + '|' + s.decode(new Uint8Array([0xac])));
console.log(dec.decode(new Uint16Array([0x6968]).buffer), dec.decode(new DataView(new Uint8Array([0x6f, 0x6b]).buffer)));
console.log(new TextDecoder('UTF8').encoding);
try { new TextDecoder('klingon'); } catch (e) { console.log(e.name); }
console.log(btoa('hello world'), btoa(''), btoa('\xff\xfe'), atob('aGVsbG8gd29ybGQ='), atob(' aGk '), atob('YQ'));
for (const bad of ['a', 'a===', '*abc']) { try { atob(bad); } catch (e) { console.log('atob', JSON.stringify(bad), e.name); } }
try { btoa('\u20ac'); } catch (e) { console.log('btoa', e.name, e instanceof DOMException); }
