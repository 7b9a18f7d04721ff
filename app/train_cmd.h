/* train_cmd.h — `train` and `eval`: the commands that rebuild and measure the shipped models. */
#ifndef GLASSBOX_TRAIN_CMD_H
#define GLASSBOX_TRAIN_CMD_H

#include "app/session.h"

int cmd_train(session *s, int argc, char **argv, const char *rest);
int cmd_eval(session *s, int argc, char **argv, const char *rest);
int cmd_curves(session *s, int argc, char **argv, const char *rest);

#endif
