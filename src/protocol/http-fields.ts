// What an HTTP/1.1 request can carry in a header (RFC 9110): checked where a
// server config is accepted and again where the actor writes the request, so
// a value accepted is one that can be sent. Pure.

/** A header name: an RFC 9110 token. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A character no header value may hold (controls but tab, DEL, past U+00FF): one would split or corrupt the request. */
export const HEADER_VALUE_FORBIDDEN = /[^\t\x20-\x7e\x80-\xff]/;
