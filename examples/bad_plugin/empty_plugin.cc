// A shared library with no OPSCOPE_OP: loading it as a plugin is an error.
extern "C" int opscope_empty_plugin_marker() { return 42; }
