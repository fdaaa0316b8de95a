// sdk.h: umbrella header for plugin authors — everything a plugin needs to implement a component.
#pragma once

#include "ethost/app.h"
#include "ethost/component.h"
#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/error.h"
#include "ethost/kinds.h"
#include "ethost/log.h"
#include "ethost/model.h"
#include "ethost/optimizer.h"
#include "ethost/plugin.h"
#include "ethost/predictor.h"
#include "ethost/reader.h"
#include "ethost/registrar.h"
#include "ethost/version.h"
