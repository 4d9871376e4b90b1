// What NVRTC gives a header imported by a .scan file without any #include: the functions of
// CUDA's math API that C++'s <cmath> has too, in the global namespace, each for double, for float
// (CUDA's C++ overloads) and under C's name of the float version (sqrtf).
//
// Not emitted code: the Clang parse that checks a header for the CUDA backend (`scangen check
// --cuda`, src/imports/cxx_header.cpp) reads these declarations before the header, as NVRTC's
// builtins come before it. The CUDA emulation, which compiles the kernels as host C++, gets the
// same names from the C++ library (<math.h> and <stdlib.h> put its overloads in the global
// namespace). imports_test.cpp holds the three to this list: each declaration below is called
// through NVRTC, through the emulation and through the check, and must give the result type
// written here. Functions that only CUDA has (rsqrt, sinpi, normcdf, erfinv...) are left out:
// the emulation could not call them.
#ifndef SCANGEN_NVRTC_MATH_H
#define SCANGEN_NVRTC_MATH_H

#pragma clang force_cuda_host_device begin

// Of one argument.
double acos(double); float acos(float); float acosf(float);
double asin(double); float asin(float); float asinf(float);
double atan(double); float atan(float); float atanf(float);
double cos(double); float cos(float); float cosf(float);
double sin(double); float sin(float); float sinf(float);
double tan(double); float tan(float); float tanf(float);
double acosh(double); float acosh(float); float acoshf(float);
double asinh(double); float asinh(float); float asinhf(float);
double atanh(double); float atanh(float); float atanhf(float);
double cosh(double); float cosh(float); float coshf(float);
double sinh(double); float sinh(float); float sinhf(float);
double tanh(double); float tanh(float); float tanhf(float);
double exp(double); float exp(float); float expf(float);
double exp2(double); float exp2(float); float exp2f(float);
double expm1(double); float expm1(float); float expm1f(float);
double log(double); float log(float); float logf(float);
double log10(double); float log10(float); float log10f(float);
double log1p(double); float log1p(float); float log1pf(float);
double log2(double); float log2(float); float log2f(float);
double logb(double); float logb(float); float logbf(float);
double cbrt(double); float cbrt(float); float cbrtf(float);
double sqrt(double); float sqrt(float); float sqrtf(float);
double erf(double); float erf(float); float erff(float);
double erfc(double); float erfc(float); float erfcf(float);
double lgamma(double); float lgamma(float); float lgammaf(float);
double tgamma(double); float tgamma(float); float tgammaf(float);
double ceil(double); float ceil(float); float ceilf(float);
double floor(double); float floor(float); float floorf(float);
double nearbyint(double); float nearbyint(float); float nearbyintf(float);
double rint(double); float rint(float); float rintf(float);
double round(double); float round(float); float roundf(float);
double trunc(double); float trunc(float); float truncf(float);
double fabs(double); float fabs(float); float fabsf(float);
// Of two and three.
double atan2(double, double); float atan2(float, float); float atan2f(float, float);
double pow(double, double); float pow(float, float); float powf(float, float);
double fmod(double, double); float fmod(float, float); float fmodf(float, float);
double remainder(double, double); float remainder(float, float); float remainderf(float, float);
double copysign(double, double); float copysign(float, float); float copysignf(float, float);
double nextafter(double, double); float nextafter(float, float); float nextafterf(float, float);
double fdim(double, double); float fdim(float, float); float fdimf(float, float);
double fmax(double, double); float fmax(float, float); float fmaxf(float, float);
double fmin(double, double); float fmin(float, float); float fminf(float, float);
double hypot(double, double); float hypot(float, float); float hypotf(float, float);
double fma(double, double, double); float fma(float, float, float); float fmaf(float, float, float);
// With an integer or a pointer among the parameters or as the result.
double frexp(double, int*); float frexp(float, int*); float frexpf(float, int*);
double ldexp(double, int); float ldexp(float, int); float ldexpf(float, int);
double modf(double, double*); float modf(float, float*); float modff(float, float*);
double scalbn(double, int); float scalbn(float, int); float scalbnf(float, int);
double scalbln(double, long); float scalbln(float, long); float scalblnf(float, long);
double remquo(double, double, int*); float remquo(float, float, int*); float remquof(float, float, int*);
int ilogb(double); int ilogb(float); int ilogbf(float);
long lrint(double); long lrint(float); long lrintf(float);
long lround(double); long lround(float); long lroundf(float);
long long llrint(double); long long llrint(float); long long llrintf(float);
long long llround(double); long long llround(float); long long llroundf(float);
double nan(const char*); float nanf(const char*);
// C's classification macros are functions of C++ here, returning int as NVRTC's do.
int isnan(double); int isnan(float);
int isinf(double); int isinf(float);
int isfinite(double); int isfinite(float);
int signbit(double); int signbit(float);
int abs(int); long abs(long); long long abs(long long); double abs(double); float abs(float);
long labs(long); long long llabs(long long);

#pragma clang force_cuda_host_device end

#endif  // SCANGEN_NVRTC_MATH_H
