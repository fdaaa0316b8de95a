// export.h: symbol visibility macros for the SDK library and plugin entry points.
#pragma once

#define ET_API __attribute__((visibility("default")))
#define ET_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
