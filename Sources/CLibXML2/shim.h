#ifndef CORELOCATION_CLIBXML2_SHIM_H
#define CORELOCATION_CLIBXML2_SHIM_H
// Debian's libxml2 is built with ICU, so <libxml/encoding.h> includes <unicode/ucnv.h>; its ICU
// types then clash with the copy of ICU that Foundation brings (_FoundationICU) in any Swift module
// that imports both. Nothing here uses libxml2's ICU converters: hiding them only drops the two
// trailing `uconv_t` pointers from `xmlCharEncodingHandler`, a struct this package only ever
// handles through libxml2's own functions, never by value.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

/// XML_SAX2_MAGIC as an unsigned int: the macro's value does not fit Swift's imported Int32, and
/// `xmlSAXHandler.initialized` must hold it for libxml2 to call the SAX2 (namespace) callbacks and
/// the structured error callback `serror`.
static inline unsigned int clx_sax2_magic(void) { return XML_SAX2_MAGIC; }

/// The current line of the parser's input (1-based), or 0 when there is no input.
static inline int clx_current_line(xmlParserCtxtPtr ctxt) {
  return (ctxt != NULL && ctxt->input != NULL) ? ctxt->input->line : 0;
}

/// How many bytes from `pointer` may be read: up to the end of the parser's current input buffer
/// when `pointer` lies inside it (an attribute value libxml2 did not have to copy), else 0.
static inline long clx_readable_from(xmlParserCtxtPtr ctxt, const xmlChar *pointer) {
  if (ctxt == NULL || ctxt->input == NULL || ctxt->input->base == NULL || ctxt->input->end == NULL)
    return 0;
  if (pointer < ctxt->input->base || pointer > ctxt->input->end) return 0;
  return (long)(ctxt->input->end - pointer);
}

/// Stops the parser: no further SAX callbacks (xmlStopParser, as a named helper for clarity).
static inline void clx_stop(xmlParserCtxtPtr ctxt) {
  if (ctxt != NULL) xmlStopParser(ctxt);
}

/// What libxml2's thread-local generic error handler was before `clx_silence_begin`.
typedef struct {
  xmlGenericErrorFunc func;
  void *context;
} clx_generic_error_state;

static void clx_discard_generic_error(void *context, const char *message, ...) {
  (void)context;
  (void)message;
}

/// Points this thread's generic error handler at a function that discards the message, and returns
/// the previous one. libxml2 reports a few problems (encoding conversion failures) there, with no
/// parser context, and by default prints them to standard error; everything else reaches the
/// structured `serror` callback. Swift cannot define a variadic C function, hence this helper.
static inline clx_generic_error_state clx_silence_begin(void) {
  clx_generic_error_state previous;
  previous.func = xmlGenericError;
  previous.context = xmlGenericErrorContext;
  xmlSetGenericErrorFunc(NULL, clx_discard_generic_error);
  return previous;
}

/// Restores the generic error handler saved by `clx_silence_begin`.
static inline void clx_silence_end(clx_generic_error_state previous) {
  xmlSetGenericErrorFunc(previous.context, previous.func);
}
#endif
