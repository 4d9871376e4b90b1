// A backward include: the check must refuse this fixture.
#include "ir/type.h"
