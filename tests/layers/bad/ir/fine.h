#include "support/check.h"
