// DOMException, Event, CustomEvent, EventTarget, AbortController and
// AbortSignal (DOM Standard, WebIDL's DOMException), for a run without a
// document: no capture/bubble path, an event's path is its target alone.
// Loaded by guest/web.c on first use of any of them.
(function (native) {
  'use strict';

  const kLegacyCodes = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };

  const exceptionState = new WeakMap();
  class DOMException extends Error {
    constructor(message = '', options = 'Error') {
      super();
      const name = options !== null && typeof options === 'object'
        ? (options.name === undefined ? 'Error' : String(options.name))
        : String(options);
      exceptionState.set(this, { message: String(message), name });
      if (options !== null && typeof options === 'object' && 'cause' in options) {
        Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
      }
    }
    get name() { return state(this).name; }
    get message() { return state(this).message; }
    get code() { return kLegacyCodes[state(this).name] || 0; }
  }
  function state(exception) {
    const found = exceptionState.get(exception);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }
  for (const [name, code] of Object.entries(kLegacyCodes)) {
    const constant = name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase().replace(/_ERROR$/, '_ERR');
    Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
    Object.defineProperty(DOMException.prototype, constant, { value: code, enumerable: true });
  }

  // ---- Event ----------------------------------------------------------

  const eventState = new WeakMap();
  function ev(event) {
    const found = eventState.get(event);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }

  class Event {
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
      const options = init == null ? {} : init;
      eventState.set(this, {
        type: String(type),
        bubbles: !!options.bubbles,
        cancelable: !!options.cancelable,
        composed: !!options.composed,
        target: null,
        currentTarget: null,
        phase: 0,
        canceled: false,
        stop: false,
        stopImmediate: false,
        dispatching: false,
        inPassive: false,
        timeStamp: native.now(),
      });
    }
    get type() { return ev(this).type; }
    get target() { return ev(this).target; }
    get srcElement() { return ev(this).target; }
    get currentTarget() { return ev(this).currentTarget; }
    get eventPhase() { return ev(this).phase; }
    get bubbles() { return ev(this).bubbles; }
    get cancelable() { return ev(this).cancelable; }
    get composed() { return ev(this).composed; }
    get defaultPrevented() { return ev(this).canceled; }
    get returnValue() { return !ev(this).canceled; }
    set returnValue(value) { if (!value) this.preventDefault(); }
    get cancelBubble() { return ev(this).stop; }
    set cancelBubble(value) { if (value) ev(this).stop = true; }
    get isTrusted() { return false; }
    get timeStamp() { return ev(this).timeStamp; }
    composedPath() {
      const s = ev(this);
      return s.dispatching && s.currentTarget ? [s.currentTarget] : [];
    }
    preventDefault() {
      const s = ev(this);
      if (s.cancelable && !s.inPassive) s.canceled = true;
    }
    stopPropagation() { ev(this).stop = true; }
    stopImmediatePropagation() {
      const s = ev(this);
      s.stop = true;
      s.stopImmediate = true;
    }
  }
  for (const [name, value] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
    Object.defineProperty(Event, name, { value, enumerable: true });
    Object.defineProperty(Event.prototype, name, { value, enumerable: true });
  }
  Object.defineProperty(Event.prototype, Symbol.toStringTag, { value: 'Event', configurable: true });

  const customDetail = new WeakMap();
  class CustomEvent extends Event {
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
      super(type, init);
      customDetail.set(this, init != null && init.detail !== undefined ? init.detail : null);
    }
    get detail() {
      if (!customDetail.has(this)) throw new TypeError('Illegal invocation');
      return customDetail.get(this);
    }
  }
  Object.defineProperty(CustomEvent.prototype, Symbol.toStringTag, { value: 'CustomEvent', configurable: true });

  // ---- EventTarget ----------------------------------------------------

  const listenersOf = new WeakMap(); // target -> Map(type -> [listener])

  function flatten(options) {
    if (typeof options === 'boolean') return { capture: options };
    if (options == null) return { capture: false };
    return {
      capture: !!options.capture,
      once: !!options.once,
      passive: !!options.passive,
      signal: options.signal,
    };
  }

  // Errors thrown by listeners are reported as uncaught, as Node does (the
  // run fails), but only after the dispatch has reached every listener.
  function report(error) {
    queueMicrotask(() => { throw error; });
  }

  class EventTarget {
    constructor() {
      listenersOf.set(this, new Map());
    }
    addEventListener(type, callback, options = undefined) {
      const all = targetListeners(this);
      if (arguments.length < 2) throw new TypeError('The "listener" argument must be specified');
      const flat = flatten(options);
      if (callback == null) return;
      if (typeof callback !== 'function' && typeof callback !== 'object') {
        throw new TypeError('The "listener" argument must be an instance of EventListener.');
      }
      const signal = flat.signal;
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        throw new TypeError('The "options.signal" property must be an instance of AbortSignal.');
      }
      if (signal && signal.aborted) return;
      type = String(type);
      let list = all.get(type);
      if (!list) all.set(type, (list = []));
      if (list.some((l) => l.callback === callback && l.capture === flat.capture)) return;
      const listener = { callback, capture: flat.capture, once: !!flat.once, passive: !!flat.passive, removed: false };
      list.push(listener);
      if (signal) {
        signal.addEventListener('abort', () => this.removeEventListener(type, callback, flat));
      }
    }
    removeEventListener(type, callback, options = undefined) {
      const all = targetListeners(this);
      const capture = flatten(options).capture;
      const list = all.get(String(type));
      if (!list) return;
      const index = list.findIndex((l) => l.callback === callback && l.capture === capture);
      if (index < 0) return;
      list[index].removed = true;
      list.splice(index, 1);
    }
    dispatchEvent(event) {
      const all = targetListeners(this);
      if (!(event instanceof Event)) {
        throw new TypeError('The "event" argument must be an instance of Event.');
      }
      const s = ev(event);
      if (s.dispatching) throw new DOMException('The event is already being dispatched.', 'InvalidStateError');
      s.dispatching = true;
      s.target = this;
      s.currentTarget = this;
      s.phase = 2;
      const list = all.get(s.type);
      const snapshot = list ? list.slice() : [];
      for (const listener of snapshot) {
        if (listener.removed) continue;
        if (listener.once) this.removeEventListener(s.type, listener.callback, { capture: listener.capture });
        s.inPassive = listener.passive;
        try {
          if (typeof listener.callback === 'function') {
            listener.callback.call(this, event);
          } else {
            const handle = listener.callback.handleEvent;
            if (typeof handle !== 'function') throw new TypeError("The listener's handleEvent is not a function.");
            handle.call(listener.callback, event);
          }
        } catch (error) {
          report(error);
        }
        s.inPassive = false;
        if (s.stopImmediate) break;
      }
      s.dispatching = false;
      s.currentTarget = null;
      s.phase = 0;
      s.stop = false;
      s.stopImmediate = false;
      return !s.canceled;
    }
  }
  function targetListeners(target) {
    const found = listenersOf.get(target);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }
  Object.defineProperty(EventTarget.prototype, Symbol.toStringTag, { value: 'EventTarget', configurable: true });

  // An `on<type>` handler attribute (signal.onabort).
  function defineHandler(prototype, type) {
    const handlers = new WeakMap();
    Object.defineProperty(prototype, 'on' + type, {
      configurable: true,
      enumerable: true,
      get() { return handlers.has(this) ? handlers.get(this).value : null; },
      set(value) {
        let slot = handlers.get(this);
        if (!slot) {
          slot = { value: null };
          handlers.set(this, slot);
          this.addEventListener(type, (event) => {
            if (typeof slot.value === 'function') {
              const result = slot.value.call(this, event);
              if (result === false) event.preventDefault();
            }
          });
        }
        slot.value = typeof value === 'function' || (value !== null && typeof value === 'object') ? value : null;
      },
    });
  }

  // ---- AbortSignal, AbortController -----------------------------------

  const kCreate = Symbol('create');
  const signalState = new WeakMap();
  function sig(signal) {
    const found = signalState.get(signal);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }

  function signalAbort(signal, reason) {
    const s = sig(signal);
    if (s.aborted) return;
    s.aborted = true;
    s.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const dependents = s.dependents;
    s.dependents = [];
    signal.dispatchEvent(new Event('abort'));
    for (const dependent of dependents) {
      const target = dependent.deref();
      if (target) signalAbort(target, s.reason);
    }
  }

  class AbortSignal extends EventTarget {
    constructor(token = undefined) {
      if (token !== kCreate) throw new TypeError('Illegal constructor');
      super();
      signalState.set(this, { aborted: false, reason: undefined, dependents: [] });
    }
    get aborted() { return sig(this).aborted; }
    get reason() { return sig(this).reason; }
    throwIfAborted() {
      const s = sig(this);
      if (s.aborted) throw s.reason;
    }
    static abort(reason = undefined) {
      const signal = new AbortSignal(kCreate);
      signalAbort(signal, reason);
      return signal;
    }
    static timeout(milliseconds) {
      const delay = Number(milliseconds);
      if (!Number.isFinite(delay) || delay < 0) {
        throw new RangeError('The "delay" argument must be a non-negative finite number.');
      }
      const signal = new AbortSignal(kCreate);
      // As Node: the timer does not keep the run alive.
      native.setUnrefTimeout(() => {
        signalAbort(signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      }, delay);
      return signal;
    }
    static any(signals) {
      const list = Array.from(signals);
      for (const source of list) {
        if (!(source instanceof AbortSignal)) {
          throw new TypeError('The "signals" argument must be an iterable of AbortSignal.');
        }
      }
      const signal = new AbortSignal(kCreate);
      for (const source of list) {
        if (source.aborted) {
          signalAbort(signal, source.reason);
          return signal;
        }
      }
      const weak = new WeakRef(signal);
      for (const source of list) sig(source).dependents.push(weak);
      return signal;
    }
  }
  defineHandler(AbortSignal.prototype, 'abort');
  Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: 'AbortSignal', configurable: true });

  const controllerSignal = new WeakMap();
  class AbortController {
    constructor() {
      controllerSignal.set(this, new AbortSignal(kCreate));
    }
    get signal() {
      const signal = controllerSignal.get(this);
      if (!signal) throw new TypeError('Illegal invocation');
      return signal;
    }
    abort(reason = undefined) {
      signalAbort(this.signal, reason);
    }
  }
  Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: 'AbortController', configurable: true });

  return { DOMException, Event, CustomEvent, EventTarget, AbortSignal, AbortController };
})
