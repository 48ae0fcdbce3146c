// What the files of the HELLO plugin share.
#ifndef HELLO_DEVICE_HELLO_H_
#define HELLO_DEVICE_HELLO_H_

namespace hello {
constexpr char kDeviceType[] = "HELLO";
}  // namespace hello

// The plugin's C entry points; every other symbol stays hidden (pdk_add_plugin).
#define HELLO_EXPORT extern "C" __attribute__((visibility("default")))

#endif  // HELLO_DEVICE_HELLO_H_
